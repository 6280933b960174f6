/**
 * The head reads of one turn of the event loop, sent as one request once the turn's calls have all arrived (however
 * many calls and networks); `fetch` answers each unique key's head or null. A failed fetch fails every read of its
 * turn (the shared state's fallback then answers them from the process's own head). Shared by the Redis hub (one
 * MGET) and the workers' view of the primary (one IPC call).
 */
export class TurnReads {
  private batch: { keys: string[]; done: Promise<Map<string, number>> } | undefined;

  constructor(private readonly fetch: (keys: string[]) => Promise<ReadonlyArray<number | string | null>>) {}

  read(key: string): Promise<number | undefined> {
    let batch = this.batch;
    if (!batch) {
      const keys: string[] = [];
      const done = new Promise<Map<string, number>>((resolve, reject) => setImmediate(() => {
        this.batch = undefined;
        const unique = [...new Set(keys)];
        this.fetch(unique).then((values) => {
          const heads = new Map<string, number>();
          values.forEach((v, i) => { if (v !== null) heads.set(unique[i], Number(v)); });
          resolve(heads);
        }, reject);
      }));
      batch = this.batch = { keys, done };
    }
    batch.keys.push(key);
    return batch.done.then((heads) => heads.get(key));
  }
}
