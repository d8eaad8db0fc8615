// Takes back changes to Map entries: a handler that fails under nonFatalErrors has its changes
// discarded, both the entity writes in the block's write buffer and the block's own bookkeeping.
/** Records Map entries before they change, so that undo() can put them back. */
export class MapJournal {
  private readonly entries: { map: Map<unknown, unknown>; key: unknown; had: boolean; was: unknown }[] = [];

  /** Records the entry of `key` in `map` as it is now; call it before changing the entry. */
  record<K, V>(map: Map<K, V>, key: K): void {
    this.entries.push({ map: map as Map<unknown, unknown>, key, had: map.has(key), was: map.get(key) });
  }

  /** Puts back every recorded entry, latest change first, as it was when recorded. */
  undo(): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const { map, key, had, was } = this.entries[i]!;
      if (had) map.set(key, was);
      else map.delete(key);
    }
    this.entries.length = 0;
  }
}
