// The backup capability's entry: the whole configuration out as one versioned document (written as it is sent), and
// the same document in, checked as a whole before a restore replaces anything. The rest of the daemon imports this file.
export {
  type BackupOptions,
  BackupService,
  type RestoreInput,
  type RestoreSession,
  type RestoreSummary,
} from './backup.js';
export { BackupSchema, restoreBodyBytes } from './backup-format.js';
export type { DocumentStream } from './backup-stream.js';
