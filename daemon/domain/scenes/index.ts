// The scenes capability's entry: saved states of zones applied in one step with an undo slot, and sleep timers that
// switch zones off when they are due. Both act on zones only through the audio capability. The rest of the daemon
// imports this file.
export {
  type ApplyResult,
  SCENE_CHANGE_NONE,
  type SceneAudio,
  type SceneChange,
  type SceneLimits,
  type SceneLookups,
  ScenesService,
} from './scenes.js';
export { MAX_SLEEP_MINUTES, type SleepAudio, SleepTimers } from './sleep-timers.js';
