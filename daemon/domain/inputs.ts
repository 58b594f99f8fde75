// Input devices: the appliance's physical inputs, their favorites, and admin-made entries.
import { randomUUID } from 'node:crypto';
import type { AudioRepo, InputDeviceRow } from '../store/audio-repo.js';
import type { EventBus, InputDeviceView } from './events.js';
import { conflict, invalid, notFound } from './errors.js';
import type { Store } from '../store/db.js';
import type { MetaRepo } from '../store/meta-repo.js';
import type { Caller } from './access.js';
import { requireAdmin, requireWriter } from './policy.js';

export class InputsService {
  constructor(
    private readonly store: Store,
    private readonly repo: AudioRepo,
    private readonly meta: MetaRepo,
    private readonly bus: EventBus,
    private readonly driverName: string,
    private readonly inputChannels: () => number[],
  ) {}

  list(): InputDeviceView[] {
    return this.repo.inputs().map(view);
  }

  get(id: string): InputDeviceView {
    return view(this.row(id));
  }

  setFavorite(caller: Caller, id: string, isFavorite: boolean): void {
    requireWriter(caller);
    const row = this.row(id);
    this.repo.setInputFavorite(id, isFavorite);
    if ((row.is_favorite === 1) !== isFavorite) {
      this.bus.publish({ type: 'inputDevice.favoriteChanged', payload: { inputDeviceId: id, isFavorite } });
    }
  }

  create(caller: Caller, input: { name: string; kind?: string; input: { driver?: string; channel: number } }): InputDeviceView {
    requireAdmin(caller, 'creating an input device');
    if (input.input.driver !== undefined && input.input.driver !== this.driverName) {
      throw invalid(`"input.driver" must be "${this.driverName}", got "${input.input.driver}"`, { 'input.driver': [`must be "${this.driverName}"`] });
    }
    const channels = this.inputChannels();
    if (!channels.includes(input.input.channel)) {
      throw invalid(`"input.channel" must be one of ${channels.join(', ')}, got ${input.input.channel}`, { 'input.channel': ['not an input of the amplifier'] });
    }
    const row: InputDeviceRow = {
      id: randomUUID(),
      name: input.name,
      kind: input.kind ?? 'line-in',
      input_driver: this.driverName,
      input_channel: input.input.channel,
      is_favorite: 0,
      created_at: new Date().toISOString(),
    };
    this.store.transaction(() => {
      const taken = this.repo.inputByChannel(this.driverName, input.input.channel);
      if (taken) throw conflict(`input ${input.input.channel} is already "${taken.name}" (${taken.id})`);
      this.repo.insertInput(row);
      this.meta.clearDeleted('input', this.driverName, input.input.channel);
    });
    const created = view(row);
    this.bus.publish({ type: 'inputDevice.created', payload: { inputDevice: created } });
    return created;
  }

  remove(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting an input device');
    const row = this.row(id);
    this.store.transaction(() => {
      this.repo.deleteInput(id);
      this.meta.markDeleted('input', row.input_driver, row.input_channel);
    });
    this.bus.publish({ type: 'inputDevice.deleted', payload: { inputDeviceId: id } });
  }

  private row(id: string): InputDeviceRow {
    const row = this.repo.input(id);
    if (!row) throw notFound(`no input device with id ${id}`);
    return row;
  }
}

function view(row: InputDeviceRow): InputDeviceView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    input: { driver: row.input_driver, channel: row.input_channel },
    isFavorite: row.is_favorite === 1,
  };
}
