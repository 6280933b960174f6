import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { NotFoundError } from '../../accounts/errors.ts';
import type { KeyPatchInput } from '../../accounts/service.ts';
import type { JwtKeyInput } from '../../auth/jwt-public-key.ts';
import { isKeyValue, PREFIX_LENGTH } from '../../auth/key-value.ts';
import { KEY_TYPES, type ApiKey, type Permission } from '../../store/keys/api-key.ts';
import type { Account } from '../../store/accounts/account.ts';
import type { Config } from '../../config/schema.ts';
import { JSON_FLAG, type Options, type Subcommand, type Values } from '../command.ts';
import { findAccount, isId, named, withStore, type Context } from '../context.ts';
import { EXAMPLE_METHOD } from '../../methods/named.ts';
import { UsageError } from '../errors.ts';
import { gatewayUrl } from '../store-guard.ts';
import { duration, integer, list, nonEmpty, oneOf, required, someChange, str } from '../flags.ts';
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
  'deny-method': { type: 'string' },
  contract: { type: 'string' },
  'user-agent': { type: 'string' },
  'logs-range': { type: 'string' },
  'jwt-key': { type: 'string' },
  'jwt-audience': { type: 'string' },
  expires: { type: 'string' },
};
const RESTRICTIONS = '[--ip IP,CIDR,...] [--origin URL,...] [--network NAME,...] [--method NAME,...] [--deny-method NAME,...] '
  + '[--contract ADDRESS,...] [--user-agent PART,...] [--logs-range BLOCKS] [--jwt-key [ID=]FILE,...] [--jwt-audience AUD,...]';

function restrictions(v: Values): KeyPatchInput {
  return {
    ipAllowlist: list(v, 'ip'), originAllowlist: list(v, 'origin'), networkAllowlist: list(v, 'network'), methodAllowlist: list(v, 'method'),
    methodDenylist: list(v, 'deny-method'), contractAllowlist: list(v, 'contract'), userAgentAllowlist: list(v, 'user-agent'),
    // `--logs-range ''` lifts the key's own range (the network's applies).
    logsMaxBlockRange: v['logs-range'] === '' ? null : integer(v, 'logs-range', 1),
    jwtKeys: jwtKeyFiles(list(v, 'jwt-key')), jwtAudiences: list(v, 'jwt-audience'),
  };
}

/**
 * `--jwt-key` files: each a public key as PEM or JWK (JSON), named `ID=FILE` or, without an id, by the file's name
 * (`signer.pem` is `signer`). `--jwt-key ''` removes the keys, and with them the JWT requirement.
 */
function jwtKeyFiles(files: string[] | undefined): JwtKeyInput[] | undefined {
  return files?.map((f) => {
    const eq = f.indexOf('=');
    const [id, file] = eq > 0 ? [f.slice(0, eq), f.slice(eq + 1)] : [basename(f, extname(f)), f];
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new UsageError(`--jwt-key: cannot read ${file}`);
    }
    if (text.trimStart().startsWith('{')) {
      try {
        return { id, jwk: JSON.parse(text) as Record<string, unknown> };
      } catch {
        throw new UsageError(`--jwt-key: ${file} is neither PEM nor JSON`);
      }
    }
    return { id, pem: text };
  });
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

/** The overlap of a rotation: `60s`, `15m`, `2h`, `1d` or milliseconds; at most a day. */
const MAX_OVERLAP = '1d';

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
    ['method denylist', k.methodDenylist.join(', ') || 'none'], ['contract allowlist', orAny(k.contractAllowlist)],
    ['user-agent allowlist', orAny(k.userAgentAllowlist)], ['eth_getLogs range', k.logsMaxBlockRange ? `${k.logsMaxBlockRange} blocks` : "the network's"],
    ['JWT', k.jwtKeys.length ? `required: ${k.jwtKeys.map((j) => `${j.id} (${j.alg})`).join(', ')}${k.jwtAudiences.length ? `; aud ${k.jwtAudiences.join(', ')}` : ''}` : 'not required'],
    ...(k.previousUntil ? [['previous value', `${k.previousPrefix}… works until ${k.previousUntil}`] as [string, string]] : []),
    ['expires', k.expiresAt ?? 'never'], ['created', k.createdAt], ['last used', k.lastUsedAt ?? 'never'],
    ...(k.revokedAt ? [['revoked', k.revokedAt] as [string, string]] : []),
  ]);
}

/** A curl line like the start banner's, when the key can make that call from here. */
function tryIt(config: Readonly<Config>, k: ApiKey, value: string): string {
  const usable = k.permissions.includes('rpc') && !k.ipAllowlist.length && !k.originAllowlist.length && !k.jwtKeys.length && !k.userAgentAllowlist.length
    && !k.methodDenylist.includes(EXAMPLE_METHOD)
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
      const patch: KeyPatchInput = { name: nonEmpty('name', str(v, 'name')), ...restrictions(v), expiresAt: v['no-expiry'] ? null : str(v, 'expires') };
      someChange(patch, '--name, --ip, --origin, --network, --method, --deny-method, --contract, --user-agent, --logs-range, --jwt-key, --jwt-audience, --expires, --no-expiry');
      await findKey(cx, id);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, x]) => x !== undefined));
      const key = await named(cx.accounts.updateKey(id, defined), `key ${id}`);
      return { json: publicKey(key), text: `Updated key ${key.name}.\n${details(key, await cx.store.accounts.getAccount(key.accountId))}` };
    }),
  },
  rotate: {
    usage: `rotate KEY_ID [--overlap 60s] [--json]`,
    summary: `a new value for a key, printed once; the old one keeps working for --overlap (s, m, h; at most ${MAX_OVERLAP}; default 0: it stops now)`,
    options: { ...JSON_FLAG, overlap: { type: 'string' } },
    args: ['KEY_ID'],
    run: withStore(async (cx, v, [id]) => {
      await findKey(cx, id);
      const overlapMs = duration(v, 'overlap', 24 * 3_600_000) ?? 0;
      const { key, value } = await named(cx.accounts.rotateKey(id, overlapMs), `key ${id}`);
      const old = key.previousUntil ? `The old value (${key.previousPrefix}…) works until ${key.previousUntil}, then only this one.` : 'The old value no longer works.';
      const text = `New value of key ${key.name}. It is shown this once; only its hash is stored:\n  ${value}\n\n${old}`;
      return { json: { value, ...publicKey(key) }, text };
    }),
  },
  revoke: {
    usage: 'revoke KEY_ID|VALUE|PREFIX [--json]',
    summary: 'revoke a key, named by its id, its value or the prefix shown for it: refused (401) from the next request, within a second on a running gateway',
    options: JSON_FLAG,
    args: ['KEY'],
    run: withStore(async (cx, _v, [ref]) => {
      // A value is named by its prefix only: an error line may land in a log.
      const shown = isKeyValue(ref) ? `${ref.slice(0, PREFIX_LENGTH)}…` : ref.slice(0, 64);
      const done = await named(cx.accounts.revokeByReference(ref), `key ${shown}`);
      if ('ambiguous' in done) {
        const rows = table(['ID', 'NAME', 'TYPE', 'PREFIX', 'STATUS', 'EXPIRES', 'LAST USED'], done.ambiguous.map(row), '');
        throw new UsageError(`${shown} is the prefix of ${done.ambiguous.length} keys; nothing was revoked. Give one's id:\n${rows}`);
      }
      if ('overlapEnded' in done) {
        const k = done.overlapEnded;
        return { json: publicKey(k), text: `That was key ${k.name}'s (${k.id}) previous value: it no longer works. The key and its current value (${prefixShown(k)}) still do.` };
      }
      const key = done.revoked;
      const text = done.before.revokedAt ? `Key ${key.name} (${key.id}) was already revoked at ${key.revokedAt}.` : `Revoked key ${key.name} (${key.id}) at ${key.revokedAt}.`;
      return { json: publicKey(key), text };
    }),
  },
};
