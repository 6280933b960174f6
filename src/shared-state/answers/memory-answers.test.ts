import { answersContract } from './answers.contract.ts';
import { MemoryAnswers } from './memory-answers.ts';

/** Each "process" of the contract a caller of one table, as the callers of one process are. */
answersContract('memory', (maxBytes) => {
  const table = new MemoryAnswers(maxBytes);
  return async () => table;
});
