// log.log and abort. A critical log line and an AssemblyScript abort (a failed assert, a thrown
// error, a null dereference caught by the runtime) both fail the handler deterministically, with
// graph-node's message wording.
import type { HostFunctions, LogLevel } from './host-context.ts';

const levels: LogLevel[] = ['critical', 'error', 'warning', 'info', 'debug'];

/** graph-node's abort message: "Mapping aborted at <file>, line <l>, column <c>, with message: <m>". */
function abortMessage(message: string | null, file: string | null, line: number, column: number): string {
  const what = message === null ? 'no message' : `message: ${message}`;
  let where = 'an unknown location';
  if (file !== null) {
    where = file;
    if (line !== 0) where += `, line ${line}`;
    if (line !== 0 && column !== 0) where += `, column ${column}`;
  }
  return `Mapping aborted at ${where}, with ${what}`;
}

class MappingAbort extends Error {}

export const logFunctions: HostFunctions = {
  'log.log': (env) => (level: number, msgPtr: number) => {
    const message = env.heap.readString(msgPtr);
    const name = levels[level] ?? 'debug';
    env.runtime.logger(name, message, env.dataSource.name);
    if (name === 'critical')
      throw new MappingAbort(`Critical error logged in mapping with log message: ${message}`);
  },
  abort: (env) => (msgPtr: number, filePtr: number, line: number, column: number) => {
    const heap = env.heap;
    throw new MappingAbort(
      abortMessage(
        heap.readNullableString(msgPtr),
        heap.readNullableString(filePtr),
        line >>> 0,
        column >>> 0,
      ),
    );
  },
};
