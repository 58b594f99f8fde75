// Input devices: the appliance's physical inputs, their favorites, and admin-made entries. Those of an amplifier that is
// not configured are listed as unavailable: a favorite mark is the users' data and still changes, and admins delete them.
import { randomUUID } from 'node:crypto';
import type { InputDeviceRow } from '../../store/audio-repo.js';
import type { Caller, InputDeviceView } from '../shared/index.js';
import { conflict, invalid, notFound, requireAdmin, requireWriter } from '../shared/index.js';
import { refOf } from './amplifiers.js';
import type { AudioParts } from './audio-parts.js';
import { availabilityOf } from './availability.js';

/** What a change of an input device naming neither of its settings is told (the REST schema says the same). */
export const INPUT_SETTINGS_NONE = 'send at least one of "name" and "kind"';

export class InputsService {
  constructor(private readonly parts: AudioParts) {}

  list(): InputDeviceView[] {
    return this.parts.repo.inputs().map((row) => this.view(row));
  }

  get(id: string): InputDeviceView {
    return this.view(this.row(id));
  }

  setFavorite(caller: Caller, id: string, isFavorite: boolean): void {
    requireWriter(caller);
    const row = this.row(id);
    this.parts.store.transaction(() => this.parts.repo.setInputFavorite(id, isFavorite));
    if ((row.is_favorite === 1) !== isFavorite) {
      this.parts.bus.publish({ type: 'inputDevice.favoriteChanged', payload: { inputDeviceId: id, isFavorite } });
    }
  }

  /** An admin names an input (and says what kind of source it is); an input of an amplifier that is gone too. */
  update(caller: Caller, id: string, update: { name?: string; kind?: string }): InputDeviceView {
    requireAdmin(caller, 'changing an input device');
    const row = this.row(id);
    if (update.name === undefined && update.kind === undefined)
      throw invalid(INPUT_SETTINGS_NONE, { body: [INPUT_SETTINGS_NONE] });
    const next = { ...row, name: update.name ?? row.name, kind: update.kind ?? row.kind };
    this.parts.store.transaction(() => this.parts.repo.setInputName(id, next.name, next.kind));
    const view = this.view(next);
    this.parts.bus.publish({ type: 'inputDevice.updated', payload: { inputDevice: view } });
    return view;
  }

  create(
    caller: Caller,
    input: { name: string; kind?: string; input: { amplifier?: string; driver?: string; channel: number } },
  ): InputDeviceView {
    requireAdmin(caller, 'creating an input device');
    const ref = refOf(this.parts.amplifiers.placeOn(input.input, 'input'));
    const row: InputDeviceRow = {
      id: randomUUID(),
      name: input.name,
      kind: input.kind ?? 'line-in',
      input_amplifier: ref.key,
      input_driver: ref.driver,
      input_channel: input.input.channel,
      is_favorite: 0,
      created_at: new Date().toISOString(),
    };
    this.parts.store.transaction(() => {
      const taken = this.parts.repo.inputByChannel(ref, input.input.channel);
      if (taken) throw conflict(`input ${input.input.channel} is already "${taken.name}" (${taken.id})`);
      this.parts.repo.insertInput(row);
      this.parts.meta.clearDeleted('input', ref, input.input.channel);
    });
    const created = this.view(row);
    this.parts.bus.publish({ type: 'inputDevice.created', payload: { inputDevice: created } });
    return created;
  }

  remove(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting an input device');
    const row = this.row(id);
    this.parts.store.transaction(() => {
      this.parts.repo.deleteInput(id);
      this.parts.meta.markDeleted('input', { key: row.input_amplifier, driver: row.input_driver }, row.input_channel);
    });
    this.parts.bus.publish({ type: 'inputDevice.deleted', payload: { inputDeviceId: id } });
  }

  private row(id: string): InputDeviceRow {
    const row = this.parts.repo.input(id);
    if (!row) throw notFound(`no input device with id ${id}`);
    return row;
  }

  private view(row: InputDeviceRow): InputDeviceView {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      input: {
        amplifier: this.parts.amplifiers.nameOf(row.input_amplifier, row.input_driver),
        driver: row.input_driver,
        channel: row.input_channel,
      },
      isFavorite: row.is_favorite === 1,
      ...availabilityOf(this.parts.amplifiers.notConfigured(row.input_amplifier, row.input_driver)),
    };
  }
}
