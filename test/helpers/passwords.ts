// A cheaper scrypt for test daemons: the daemon's own hash format and verify, at N=1024 instead of 16384 (16× less
// CPU per first admin, login, user creation and password change; a full run makes hundreds). Production's cost stays
// under test: test/unit/secrets.test.ts checks hashPassword's default, and test/api/storage-at-rest.test.ts a daemon
// started without a hasher.

import type { PasswordHasher } from '../../daemon/domain/accounts/authentication.js';
import { hashPassword, SCRYPT, type ScryptCost, verifyPassword } from '../../daemon/domain/accounts/secrets.js';

/** scrypt parameters of TEST_PASSWORDS; verifyPassword reads them back from each hash. */
export const TEST_SCRYPT: Readonly<ScryptCost> = { ...SCRYPT, N: 1024 };

/** Hashes at TEST_SCRYPT; verifies any stored hash (production-cost ones too) with the daemon's own verifyPassword. */
export const TEST_PASSWORDS: PasswordHasher = {
  hash: (password) => hashPassword(password, TEST_SCRYPT),
  verify: verifyPassword,
};
