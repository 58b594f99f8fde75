// What a domain call says no with: its DomainError's kind, for tests that check who may do what.
import { DomainError, type DomainErrorKind } from '../../daemon/domain/shared/index.js';

/** The kind of DomainError `call` throws or rejects with; 'none' when it succeeds. Any other error is rethrown. */
export async function refusal(call: () => unknown): Promise<DomainErrorKind | 'none'> {
  try {
    await call();
    return 'none';
  } catch (err) {
    if (err instanceof DomainError) return err.kind;
    throw err;
  }
}
