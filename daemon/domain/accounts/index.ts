// The accounts capability's entry: credentials to callers and login sessions (authentication), user administration,
// and the device's secrets (API keys sealed at rest, password hashes). The rest of the daemon imports this file.
export { Authentication, type AuthenticationOptions, type PasswordHasher } from './authentication.js';
export { type InitialAdminFileOutcome, reconcileInitialAdminFile } from './initial-admin-file.js';
export {
  DeviceSecrets,
  generateApiKey,
  hasPassword,
  passwordHashProblem,
  verifyPassword,
  writePrivateFile,
} from './secrets.js';
export type { UserView } from './user-account.js';
export { type NewUser, UserAdmin } from './user-admin.js';
