// A process that does nothing but store writes: it creates API keys for the demo account as fast as it can and
// prints each key's value once its creation has returned (committed). test/e2e/crash-safety.test.ts SIGKILLs it
// mid-stream. Store and configuration as the CLI finds them: NODEGATE_DATA_DIR, NODEGATE_CONFIG.
// Run: node --import tsx test/helpers/key-writer.ts
import { accountsCatalogue } from '../../src/accounts/catalogue.ts';
import { AccountsService } from '../../src/accounts/service.ts';
import { loadConfig } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open-store.ts';

const config = loadConfig(process.env.NODEGATE_CONFIG);
const store = await openStore(config);
const accounts = new AccountsService(store, accountsCatalogue(config));
const demo = await store.accounts.getAccountByEmail('demo@localhost');
if (!demo) throw new Error('no demo account: start the gateway once first');
for (let i = 0; ; i++) {
  const { value } = await accounts.createKey(demo.id, { name: `writer-${i}` });
  // Writes to a pipe are synchronous on Linux: once printed, the parent has it.
  process.stdout.write(`${value}\n`);
}
