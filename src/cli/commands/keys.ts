import { NotFoundError } from '../../accounts/errors.ts';
import { KEY_TYPES, type ApiKey, type Permission } from '../../store/keys/api-key.ts';
import type { Account } from '../../store/accounts/account.ts';
import type { Config } from '../../config/schema.ts';
import type { ApiKeyPatch } from '../../store/keys/key-store.ts';
import { JSON_FLAG, type Options, type Subcommand, type Values } from '../command.ts';
import { findAccount, isId, named, withStore, type Context } from '../context.ts';
import { EXAMPLE_METHOD } from '../../methods/named.ts';
import { UsageError } from '../errors.ts';
import { gatewayUrl } from '../store-guard.ts';
import { list, nonEmpty, oneOf, required, someChange, str } from '../flags.ts';
import { fields, keyStatus, orAny, prefixShown, publicKey, table } from '../format.ts';

/** The account `keys create` and `keys list` use without `--account`: the one the first start creates. */
const DEMO = 'demo@localhost';

const RESTRICTION_FLAGS: Options = {
  ...JSON_FLAG,
  name: { type: 'string' },
  ip: { type: 'string' },
  origin: { type: 'string' },
  network: { type: 'string' },
  method: { type: 'string' },
  expires: { type: 'string' },
};
const RESTRICTIONS = '[--ip IP,CIDR,...] [--origin URL,...] [--network NAME,...] [--method NAME,...]';

function restrictions(v: Values): ApiKeyPatch {
  return { ipAllowlist: list(v, 'ip'), originAllowlist: list(v, 'origin'), networkAllowlist: list(v, 'network'), methodAllowlist: list(v, 'method') };
}

/** The account named by `--account`, or the demo account (created as the first start would, if missing). */
async function accountOf(cx: Context, v: Values, create: boolean): Promise<Account> {
  const ref = str(v, 'account');
  if (ref !== undefined) return findAccount(cx, ref);
  const demo = await cx.store.accounts.getAccountByEmail(DEMO);
  if (demo) return demo;
  if (!create) throw new NotFoundError(`account ${DEMO} (the default of --account)`);
  return cx.accounts.createAccount({ name: 'Demo', email: DEMO });
}

async function findKey(cx: Context, id: string): Promise<ApiKey> {
  const key = isId(id) ? await cx.store.keys.getKey(id) : undefined;
  if (!key) throw new NotFoundError(`key ${id}`);
  return key;
}

const row = (k: ApiKey) => [k.id, k.name, k.type, prefixShown(k), keyStatus(k), k.expiresAt ?? 'never', k.lastUsedAt ?? 'never'];

function details(k: ApiKey, account: Account | undefined): string {
  return fields([
    ['id', k.id], ['name', k.name], ['account', account ? `${account.email} (${account.id})` : k.accountId],
    ['type', k.type], ['permissions', k.permissions.join(', ')], ['prefix', prefixShown(k)], ['status', keyStatus(k)],
    ['IP allowlist', orAny(k.ipAllowlist)], ['origin allowlist', orAny(k.originAllowlist)],
    ['network allowlist', orAny(k.networkAllowlist)], ['method allowlist', orAny(k.methodAllowlist)],
    ['expires', k.expiresAt ?? 'never'], ['created', k.createdAt], ['last used', k.lastUsedAt ?? 'never'],
    ...(k.revokedAt ? [['revoked', k.revokedAt] as [string, string]] : []),
  ]);
}

/** A curl line like the start banner's, when the key can make that call from here. */
function tryIt(config: Readonly<Config>, k: ApiKey, value: string): string {
  const usable = k.permissions.includes('rpc') && !k.ipAllowlist.length && !k.originAllowlist.length
    && (!k.methodAllowlist.length || k.methodAllowlist.includes(EXAMPLE_METHOD));
  if (!usable) return '';
  const network = k.networkAllowlist[0] ?? Object.keys(config.networks)[0];
  return `\n\nTry it (with the gateway running):\n  curl -s -X POST -H 'content-type: application/json' --data '{"jsonrpc":"2.0","id":1,"method":"${EXAMPLE_METHOD}","params":[]}' ${gatewayUrl(config)}/v1/${network}/${value}`;
}

export const KEY_COMMANDS: Record<string, Subcommand> = {
  list: {
    usage: `list [--account ID|EMAIL] [--json]`,
    summary: `list an account's keys (default: ${DEMO}); shows a prefix, never the key`,
    options: { ...JSON_FLAG, account: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const keys = await cx.accounts.listKeys((await accountOf(cx, v, false)).id);
      return { json: { keys: keys.map(publicKey) }, text: table(['ID', 'NAME', 'TYPE', 'PREFIX', 'STATUS', 'EXPIRES', 'LAST USED'], keys.map(row), 'no keys') };
    }),
  },
  show: {
    usage: 'show KEY_ID [--json]',
    summary: 'show a key: type, permissions, restrictions, status (never the key itself)',
    options: JSON_FLAG,
    args: ['KEY_ID'],
    run: withStore(async (cx, _v, [id]) => {
      const key = await findKey(cx, id);
      return { json: publicKey(key), text: details(key, await cx.store.accounts.getAccount(key.accountId)) };
    }),
  },
  create: {
    usage: `create --name NAME [--account ID|EMAIL] [--type Standard|Dedicated|Restricted] [--permissions rpc,webhooks,analytics,admin] ${RESTRICTIONS} [--expires ISO] [--json]`,
    summary: `create a key (default: a Standard key of ${DEMO}) and print it once; only its hash is stored`,
    options: { ...RESTRICTION_FLAGS, account: { type: 'string' }, type: { type: 'string' }, permissions: { type: 'string' } },
    run: withStore(async (cx, v) => {
      const name = required(v, 'name', 'a name to recognise the key by');
      const account = await accountOf(cx, v, true);
      const { key, value } = await cx.accounts.createKey(account.id, {
        name,
        type: oneOf(v, 'type', KEY_TYPES),
        permissions: list(v, 'permissions') as Permission[] | undefined,
        ...restrictions(v),
        expiresAt: str(v, 'expires'),
      });
      // The value first, in both forms: scripts take the first `ngk_...` of the output.
      const text = `API key created. It is shown this once; only its hash is stored:\n  ${value}\n\n${details(key, account)}${tryIt(cx.config, key, value)}`;
      return { json: { value, ...publicKey(key) }, text };
    }),
  },
  update: {
    usage: `update KEY_ID [--name NAME] ${RESTRICTIONS} [--expires ISO | --no-expiry] [--json]`,
    summary: "change a key's name, allowlists (an empty value, --ip '', lifts one) or expiry; type and permissions are fixed",
    options: { ...RESTRICTION_FLAGS, 'no-expiry': { type: 'boolean' } },
    args: ['KEY_ID'],
    run: withStore(async (cx, v, [id]) => {
      if (v.expires !== undefined && v['no-expiry']) throw new UsageError('--expires and --no-expiry: give one');
      const patch: ApiKeyPatch = { name: nonEmpty('name', str(v, 'name')), ...restrictions(v), expiresAt: v['no-expiry'] ? null : str(v, 'expires') };
      someChange(patch, '--name, --ip, --origin, --network, --method, --expires, --no-expiry');
      await findKey(cx, id);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, x]) => x !== undefined));
      const key = await named(cx.accounts.updateKey(id, defined), `key ${id}`);
      return { json: publicKey(key), text: `Updated key ${key.name}.\n${details(key, await cx.store.accounts.getAccount(key.accountId))}` };
    }),
  },
  revoke: {
    usage: 'revoke KEY_ID [--json]',
    summary: 'revoke a key: refused (401) from the next request, within a second on a running gateway',
    options: JSON_FLAG,
    args: ['KEY_ID'],
    run: withStore(async (cx, _v, [id]) => {
      const before = await findKey(cx, id);
      const key = await named(cx.accounts.revokeKey(id), `key ${id}`);
      const text = before.revokedAt ? `Key ${key.name} (${key.id}) was already revoked at ${key.revokedAt}.` : `Revoked key ${key.name} (${key.id}) at ${key.revokedAt}.`;
      return { json: publicKey(key), text };
    }),
  },
};
