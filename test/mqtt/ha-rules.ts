// Home Assistant's MQTT platform rules, as its discovery schemas and state handlers apply them, checked against what a
// broker holds: an entity breaking one is refused or shown as unknown by a real hub.
// Sources: homeassistant/components/mqtt/{number,select,switch,binary_sensor,sensor,scene,button}.py, mixins.py and
// discovery.py; homeassistant/components/sensor/__init__.py.

/** HA reads these state payloads as "no value" (`None` in any case), and ignores blank ones. */
const NO_VALUE = (payload: string) => payload.trim() === '' || payload.toLowerCase() === 'none';
/** `<prefix>/<component>/<node_id>/<object_id>/config`, ids of letters, digits, `_` and `-` (discovery.py). */
const TOPIC_ID = /^[a-zA-Z0-9_-]+$/;
const MODES = ['auto', 'box', 'slider'];
/** entity.py: the only entity categories (a config switch, a diagnostic sensor); anything else refuses the config. */
const CATEGORIES = ['config', 'diagnostic'];
/** A zone entity's object id names its zone: `zone_<uuid>_<field>`. */
const ZONE_OBJECT = /^zone_([0-9a-f-]{36})_/;

/**
 * Every rule the retained configs and their states break; empty when a hub would take them all. `retained` maps a
 * topic to its latest retained payload (a Watcher's `latest`).
 */
export function haViolations(retained: ReadonlyMap<string, string>, prefix = 'homeassistant'): string[] {
  const problems: string[] = [];
  const uniqueIds = new Map<string, string>();
  for (const [topic, text] of retained) {
    if (!topic.startsWith(`${prefix}/`) || !topic.endsWith('/config')) continue;
    const parts = topic.split('/');
    const [component, nodeId, objectId] = parts.slice(1, 4);
    const where = `${topic}:`;
    if (parts.length !== 5 || !TOPIC_ID.test(nodeId ?? '') || !TOPIC_ID.test(objectId ?? ''))
      problems.push(`${where} not <prefix>/<component>/<node_id>/<object_id>/config`);
    let config: Record<string, unknown>;
    try {
      config = JSON.parse(text) as Record<string, unknown>;
    } catch {
      problems.push(`${where} not JSON`);
      continue;
    }
    const id = config.unique_id;
    if (typeof id !== 'string' || id === '') problems.push(`${where} no unique_id`);
    else if (uniqueIds.has(id)) problems.push(`${where} unique_id ${id} also used by ${uniqueIds.get(id)}`);
    else uniqueIds.set(id, topic);
    const state = typeof config.state_topic === 'string' ? retained.get(config.state_topic) : undefined;
    problems.push(...componentRules(component ?? '', config, state).map((problem) => `${where} ${problem}`));
    if (config.entity_category !== undefined && !CATEGORIES.includes(config.entity_category as string))
      problems.push(
        `${where} entity_category ${String(config.entity_category)} is not one of ${CATEGORIES.join(', ')}`,
      );
    problems.push(...attributeRules(config, retained).map((problem) => `${where} ${problem}`));
    problems.push(
      ...availabilityRules(config, retained, ZONE_OBJECT.exec(objectId ?? '')?.[1]).map(
        (problem) => `${where} ${problem}`,
      ),
    );
  }
  return problems;
}

function componentRules(component: string, c: Record<string, unknown>, state: string | undefined): string[] {
  const problems: string[] = [];
  const need = (...keys: string[]) =>
    keys.filter((key) => typeof c[key] !== 'string' || c[key] === '').forEach((key) => problems.push(`needs ${key}`));
  switch (component) {
    case 'number': {
      need('command_topic');
      // number.py: min defaults to 1, max to 100, step to 1; validate_config refuses max <= min.
      const min = (c.min as number | undefined) ?? 1;
      const max = (c.max as number | undefined) ?? 100;
      const step = (c.step as number | undefined) ?? 1;
      if (!(typeof min === 'number' && typeof max === 'number' && min < max))
        problems.push(`max (${String(max)}) must be above min (${String(min)})`);
      if (!(typeof step === 'number' && step >= 0.001)) problems.push(`step ${String(step)} is below 0.001`);
      if (c.mode !== undefined && !MODES.includes(c.mode as string))
        problems.push(`mode ${String(c.mode)} is not one of ${MODES.join(', ')}`);
      if (state !== undefined) {
        const value = Number(state);
        if (NO_VALUE(state) || !Number.isFinite(value)) problems.push(`state ${JSON.stringify(state)} is not a number`);
        else if (value < min || value > max) problems.push(`state ${value} is outside ${min}..${max}`);
      }
      break;
    }
    case 'select': {
      need('command_topic');
      const options = c.options;
      if (!Array.isArray(options) || options.length === 0 || !options.every((o) => typeof o === 'string')) {
        problems.push('options must be a list of strings');
        break;
      }
      if (new Set(options).size !== options.length) problems.push(`options repeat: ${JSON.stringify(options)}`);
      for (const option of options as string[])
        if (NO_VALUE(option))
          problems.push(`option ${JSON.stringify(option)} reads as "no option" and can never be shown`);
      if (state !== undefined && (NO_VALUE(state) || !options.includes(state)))
        problems.push(`state ${JSON.stringify(state)} is not one of the options`);
      break;
    }
    case 'switch':
    case 'binary_sensor': {
      if (component === 'switch') need('command_topic');
      const on = (c.state_on ?? c.payload_on ?? 'ON') as string;
      const off = (c.state_off ?? c.payload_off ?? 'OFF') as string;
      if (state !== undefined && state !== on && state !== off)
        problems.push(`state ${JSON.stringify(state)} is neither ${on} nor ${off}`);
      break;
    }
    case 'sensor':
      need('state_topic');
      // sensor.py: a state longer than 255 characters is refused (the entity goes unknown).
      if (state !== undefined && state.length > 255)
        problems.push(`state of ${state.length} characters is longer than 255`);
      // sensor/__init__.py: a sensor with a unit or a numeric device class must hold a number (else it raises ValueError).
      if (
        (c.unit_of_measurement !== undefined || c.device_class === 'duration') &&
        state !== undefined &&
        !Number.isFinite(Number(state))
      ) {
        problems.push(`state ${JSON.stringify(state)} is not a number (the sensor has a unit)`);
      }
      break;
    case 'scene':
    case 'button':
      need('command_topic');
      break;
    default:
      problems.push(`component ${component} is not one this bridge should publish`);
  }
  return problems;
}

/** mixins.py: json_attributes_topic must hold a JSON object (anything else is logged and dropped). */
function attributeRules(c: Record<string, unknown>, retained: ReadonlyMap<string, string>): string[] {
  const topic = c.json_attributes_topic;
  if (topic === undefined) return [];
  if (typeof topic !== 'string') return ['json_attributes_topic is not a topic'];
  const held = retained.get(topic);
  if (held === undefined) return [];
  try {
    const value: unknown = JSON.parse(held);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? []
      : [`attributes on ${topic} are not a JSON object`];
  } catch {
    return [`attributes on ${topic} are not JSON`];
  }
}

/**
 * mixins.py: an entity with availability topics is unavailable until each holds payload_available or
 * payload_not_available (`online`/`offline` by default); anything else is ignored, so a topic that never gets one
 * leaves the entity unavailable for good. A zone's entities also follow the zone's own availability topic, or Home
 * Assistant would offer controls of a zone whose writes are refused.
 */
function availabilityRules(
  c: Record<string, unknown>,
  retained: ReadonlyMap<string, string>,
  zoneId: string | undefined,
): string[] {
  const problems: string[] = [];
  const entries = (c.availability as Array<Record<string, unknown>> | undefined) ?? [];
  for (const availability of entries) {
    const topic = availability.topic;
    if (typeof topic !== 'string') {
      problems.push('an availability entry has no topic');
      continue;
    }
    const payloads = [
      (availability.payload_available ?? 'online') as string,
      (availability.payload_not_available ?? 'offline') as string,
    ];
    const held = retained.get(topic);
    if (held === undefined || !payloads.includes(held))
      problems.push(`availability ${topic} holds ${JSON.stringify(held ?? null)}, not ${payloads.join(' or ')}`);
  }
  if (c.availability_mode !== undefined && !['all', 'any', 'latest'].includes(c.availability_mode as string))
    problems.push(`availability_mode ${String(c.availability_mode)}`);
  if (zoneId !== undefined) {
    if (
      !entries.some(
        (availability) =>
          typeof availability.topic === 'string' && availability.topic.endsWith(`/zone/${zoneId}/availability`),
      )
    ) {
      problems.push(`zone ${zoneId} does not follow its own availability topic`);
    }
    if (entries.length > 1 && c.availability_mode !== 'all')
      problems.push('a zone entity must be available only while all its availability topics are');
  }
  return problems;
}
