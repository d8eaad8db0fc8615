// The page behind each problem `type` (/problems/<kind>) and llms-full.txt's list of problem types
// say what a kind means and what to do: each kind's text must fit that kind, so none carries a
// sentence written for another.
import { describe, expect, it } from 'vitest';
import { PROBLEM_KINDS, problemPage } from '../../rest/problems.ts';

/** the sentences of a kind's explanation and remedy */
const sentences = (kind: { explanation: string; remedy: string }) =>
  `${kind.explanation} ${kind.remedy}`.split(/(?<=\.)\s+/).filter((sentence) => sentence !== '');

describe('problem kinds', () => {
  it('tell a rate-limited client to wait the Retry-After every 429 carries, and nothing of an upstream', () => {
    expect(PROBLEM_KINDS['rate-limited'].remedy).toBe(
      'Wait the number of seconds in the `Retry-After` header (every 429 carries it), then retry. To stay under the limits, pace your requests by the RateLimit header of each answer, which says how many each limit has left.',
    );
    expect(problemPage('rate-limited', 'https://api.example.com')).not.toMatch(
      /upstream|distribution|Without `Retry-After`/,
    );
  });

  it('share no sentence between two kinds, so none is copied to a kind it does not fit', () => {
    const seen = new Map<string, string>();
    const shared: string[] = [];
    for (const [name, kind] of Object.entries(PROBLEM_KINDS)) {
      for (const sentence of sentences(kind)) {
        const other = seen.get(sentence);
        if (other !== undefined && other !== name) shared.push(`${other} and ${name}: ${sentence}`);
        seen.set(sentence, name);
      }
    }
    expect(shared).toEqual([]);
  });
});
