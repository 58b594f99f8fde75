// What every capability shares, and the one entry the rest of the daemon imports it by: the error type, who is
// calling and the access policy, the typed events and their bus, the resource schemas, and the clock.

export * from './access.js';
export * from './clock.js';
export * from './errors.js';
export * from './events.js';
export * from './playback-views.js';
export * from './policy.js';
export * from './receiver-views.js';
export * from './scene-views.js';
export * from './slices.js';
export * from './views.js';
