// What a daemon setting's schema says besides JSON Schema and the checks of drivers/settings.ts: how the three
// sources name it when the name derived from its path will not do, and how its value is finished once checked.
export {};

declare module '@sinclair/typebox' {
  interface SchemaOptions {
    /** The flag without "--"; false: none. Derived from the path unless given (`mqtt.baseTopic`: mqtt-base-topic). */
    flag?: string | false;
    /** The environment variable; false: none. Derived from the path unless given (`mqtt.baseTopic`: AZC_MQTT_BASE_TOPIC). */
    env?: string | false;
    /** false: not a config-file key. */
    fileKey?: false;
    /** What a flag's value is, in one word for --help (`--host ADDRESS`). */
    valueName?: string;
    /** A path: resolved against the config file's folder (from the file) or the working directory (otherwise). */
    relativePath?: boolean;
    /** The value as the daemon keeps it, once checked (host names in lower case). */
    normalize?: (value: never) => unknown;
  }
}
