// The stream players' outputs of a backup being restored: each checked as the API checks one (closed lists; a FIFO
// resolved, outside the state folder) and kept as it resolves, so two spellings of one FIFO are one output.
import { placeOutput } from '../audio/index.js';
import type { FieldErrors } from '../shared/index.js';
import { type BackupDocument, failed } from './backup-format.js';

/**
 * The document with every FIFO path as it resolves here; refuses (400, nothing changed) a backup whose player has an
 * output the appliance may not play into, or two players on one device or FIFO, naming the players.
 */
export function placeOutputs(doc: BackupDocument, stateDir: string): BackupDocument {
  const errors: FieldErrors = {};
  const owners = new Map<string, number>();
  const players = doc.players.map((player, i) => {
    if (!player.output) return player;
    const placed = placeOutput(player.output, stateDir);
    if (placed.problem !== undefined) {
      errors[`backup.players.${i}.output.${placed.field}`] = [`of player "${player.name}" ${placed.problem}`];
      return player;
    }
    const { output } = placed;
    const key =
      output.kind === 'alsa'
        ? `alsa\u0000${output.device}`
        : output.kind === 'fifo'
          ? `fifo\u0000${output.path}`
          : undefined;
    const first = key === undefined ? undefined : owners.get(key);
    if (first !== undefined)
      errors[`backup.players.${i}.output`] = [
        `of player "${player.name}" is the same output as entry ${first} (player "${doc.players[first]!.name}")`,
      ];
    else if (key !== undefined) owners.set(key, i);
    return { ...player, output };
  });
  if (Object.keys(errors).length > 0) throw failed(errors);
  return { ...doc, players };
}
