// Types for the part of js-yaml (installed with graph-cli) the manifest loader uses; the package
// ships no TypeScript declarations of its own.
declare module 'js-yaml' {
  export function load(text: string): unknown;
}
