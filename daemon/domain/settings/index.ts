// The settings capability's entry: settings an admin edits in the dashboard and the daemon keeps, today those of the
// Home Assistant (MQTT) bridge. The rest of the daemon imports this file.
export {
  BRIDGE_CHANGE_NONE,
  BRIDGE_FIELDS,
  BRIDGE_STATES,
  type BridgeControl,
  type BridgeField,
  BridgeSettings,
  type BridgeSettingsChange,
  type BridgeSettingsView,
  type BridgeState,
  type BridgeStatus,
} from './bridge-settings.js';
