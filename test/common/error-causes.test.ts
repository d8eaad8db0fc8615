// innermostCause and innermostMessage: the error that says what to fix, from a chain of causes.
import { describe, expect, it } from 'vitest';
import { innermostCause, innermostMessage } from '../../common/error-causes.ts';

describe('innermost cause', () => {
  it('walks a chain of wrapped errors to the socket error at its end', () => {
    const socket = new Error('connect ECONNREFUSED 127.0.0.1:8000');
    const fetchFailed = new Error('fetch failed', { cause: socket });
    const wrapped = new Error('HTTP request failed', { cause: fetchFailed });
    expect(innermostCause(wrapped)).toBe(socket);
  });

  it('stops at the last Error when the cause is a value of another kind', () => {
    const error = new Error('refused', { cause: 'ECONNREFUSED' });
    expect(innermostCause(error)).toBe(error);
  });

  it('ends a chain that comes back to an error already walked at the last new one', () => {
    const outer = new Error('outer');
    const middle = new Error('middle', { cause: outer });
    const inner = new Error('inner', { cause: middle });
    outer.cause = inner;
    expect(innermostCause(outer)).toBe(middle);
  });

  it('ends an error that is its own cause at itself', () => {
    const error = new Error('loop');
    error.cause = error;
    expect(innermostCause(error)).toBe(error);
  });

  it('names a thrown value that is no Error by its text', () => {
    expect(innermostMessage('socket hang up')).toBe('socket hang up');
  });
});
