// Preloaded into the service by `bench/load.ts` in soak mode (with --expose-gc): on each
// 'heap' message from the bench it forces a full collection and answers with the heap that
// survived it, so a growing RSS can be told apart from V8 growing its heap lazily.
const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', (message) => {
  if (message !== 'heap' || !gc || !process.send) return;
  gc();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  process.send({ rss, heapUsed, heapTotal, external, arrayBuffers });
});
// the IPC channel must not keep the service alive on its own
process.channel?.unref();
