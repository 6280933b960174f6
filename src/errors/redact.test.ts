import assert from 'node:assert/strict';
import { test } from 'node:test';
import { looksLikeKey, redactUrl } from './redact.ts';

test('redactUrl hides a provider key wherever the URL carries it, and keeps what tells upstreams apart', () => {
  const cases: Array<[string, string]> = [
    ['https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef', 'https://mainnet.infura.io/v3/***'],
    ['https://eth-mainnet.g.alchemy.com/v2/aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE', 'https://eth-mainnet.g.alchemy.com/v2/***'],
    ['https://wispy-late-sound.quiknode.pro/4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b/', 'https://wispy-late-sound.quiknode.pro/***/'],
    ['https://rpc.ankr.com/eth/0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', 'https://rpc.ankr.com/eth/***'],
    ['https://eth.blastapi.io/1b0a9f3e-5c4d-4e2f-8a1b-2c3d4e5f6a7b', 'https://eth.blastapi.io/***'],
    ['https://0123456789abcdef0123456789abcdef.eth.rpc.rivet.cloud/', 'https://***.eth.rpc.rivet.cloud/'],
    ['https://user:s3cret@node.example:8545/rpc?apikey=abc&network=main', 'https://***@node.example:8545/rpc?apikey=***&network=***'],
    ['http://127.0.0.1:8545', 'http://127.0.0.1:8545/'],
    ['http://node-eu-west-1.example/eth-archive/v1', 'http://node-eu-west-1.example/eth-archive/v1'],
    ['postgres://nodegate:pw@127.0.0.1:5432/nodegate', 'postgres://***@127.0.0.1:5432/nodegate'],
    ['not a url', '(invalid url)'],
  ];
  for (const [url, shown] of cases) assert.equal(redactUrl(url), shown, url);
});

test('looksLikeKey: keys yes, path words no', () => {
  for (const k of ['0123456789abcdef', 'aB3dE5gH7jK9mN1pQ3sT', 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef', 'dGhpcyBpcyBhIGtleQ==12']) assert.ok(looksLikeKey(k), k);
  for (const w of ['v3', 'v2', 'rpc', 'mainnet', 'eth-archive-node', 'ext/bor', '0123456789abcde', '']) assert.ok(!looksLikeKey(w), w);
});
