import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** Polls until `check` holds, or fails saying `what` did not happen within `ms`. */
export async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}
