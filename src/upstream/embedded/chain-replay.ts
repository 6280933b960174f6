import type { Upstream } from '../upstream.ts';
import { JournalDamagedError, type ChainJournal } from './chain-journal.ts';

/** A generous bound on mining one replayed block (one of 3,000 logs takes anvil well under a second); a stuck call must still end. */
const MINE_MS = 120_000;
const CALL_MS = 10_000;

export interface ReplayResult {
  /** Blocks mined again from the journal (after the checkpoint anvil loaded, if any). */
  blocks: number;
  /** The checkpoint's block the chain was loaded at (0: none). */
  fromCheckpoint: number;
  /** Accepted transactions that were in no journaled block, sent again (their blocks are new). */
  trailing: number;
  /** Transactions anvil refused (known already, or no longer valid). */
  refused: number;
  ms: number;
}

export interface MiningMode {
  mining: 'auto' | 'interval';
  blockTimeSeconds: number;
}

/**
 * Rebuilds a chain from its journal on a fresh anvil: with mining off, each journaled block's transactions are sent
 * and the block mined at its journaled timestamp (`evm_mine [ts]`). On anvil 1.7.1 (fixed genesis timestamp and
 * mnemonic) the rebuilt blocks have the same hashes, so every block, receipt and log is as before. Each block's hash
 * is checked as it is mined: the first that differs stops the rebuild, since a chain served past it would not be the
 * chain clients saw. `checkpoint` is the block anvil was started at from the journal's checkpoint (0: genesis);
 * the node is never asked for its head (docs/decisions.md §9). Then mining is set back, and the accepted
 * transactions that were in no journaled block (the last moments before a hard crash) are sent again, under the
 * hashes their senders were given.
 */
export async function replayChain(node: Upstream, journal: ChainJournal, mode: MiningMode, checkpoint = 0): Promise<ReplayResult> {
  const t0 = Date.now();
  const r: ReplayResult = { blocks: 0, fromCheckpoint: checkpoint, trailing: 0, refused: 0, ms: 0 };
  const call = async (method: string, params: unknown[], ms = CALL_MS) => {
    const a = await node.call(method, params, ms);
    if (a.error) throw new Error(`${method}: ${a.error.message}`);
    return a.result;
  };
  if (journal.lastBlock > checkpoint) {
    await call('evm_setAutomine', [false]);
    if (mode.mining === 'interval') await call('evm_setIntervalMining', [0]);
    for (const e of journal.entries()) {
      if (e.kind !== 'block' || e.block.block <= checkpoint) continue;
      for (const [, raw] of e.block.txs) {
        const a = await node.call('eth_sendRawTransaction', [raw], CALL_MS);
        if (a.error) r.refused++;
      }
      await call('evm_mine', [e.block.ts], MINE_MS);
      const mined = (await call('eth_getBlockByNumber', [`0x${e.block.block.toString(16)}`, false])) as { hash: string } | null;
      if (mined?.hash !== e.block.hash) {
        throw new JournalDamagedError(`block ${e.block.block} of the embedded chain came out of its journal under the hash `
          + `${mined?.hash ?? '(none)'}, journaled as ${e.block.hash}: the chain is not served, so that no other chain is served in `
          + 'its place (was anvil upgraded? the anvil that wrote the journal rebuilds it). Move the chain\'s folder away to start a new chain');
      }
      r.blocks++;
    }
  }
  if (mode.mining === 'interval') await call('evm_setIntervalMining', [mode.blockTimeSeconds]);
  else await call('evm_setAutomine', [true]);
  for (const raw of journal.pendingRaws()) {
    const a = await node.call('eth_sendRawTransaction', [raw], CALL_MS).catch(() => undefined);
    if (a && a.error === undefined) r.trailing++;
    else r.refused++;
  }
  // Ready means the resent transactions are in blocks: anvil answers a send a moment before it mines it, so a
  // caller asking for a receipt right after the start could otherwise miss the last one.
  if (r.trailing > 0) {
    for (let i = 0; i < 500; i++) {
      const status = (await call('txpool_status', [])) as { pending?: string } | undefined;
      if (Number(status?.pending ?? 0) === 0) break;
      // automine stalled (foundry-rs/foundry#10122): re-armed, which mines what is ready and never an empty block.
      if (i % 50 === 49) await call('evm_setAutomine', [true]);
      await new Promise((res) => setTimeout(res, 20));
    }
  }
  r.ms = Date.now() - t0;
  return r;
}
