import type { Store } from '../store/store.ts';
import { newKeyMaterial } from './key-value.ts';

/** Secrets made on first start, to show once and never again. */
export interface BootstrapSecrets {
  demoKey?: string;
}

/**
 * First start: a demo key, printed once with a ready curl line (the accounts issue adds the operator login and
 * the demo account). Recorded in the store's meta table so it happens exactly once per store.
 */
export async function bootstrap(store: Store): Promise<BootstrapSecrets> {
  if (await store.getMeta('bootstrapped')) return {};
  const { value, key } = newKeyMaterial('demo');
  await store.insertKey(key);
  await store.setMeta('bootstrapped', new Date().toISOString());
  return { demoKey: value };
}
