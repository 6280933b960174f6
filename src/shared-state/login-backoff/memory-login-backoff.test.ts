import { loginBackoffContract, CONTRACT_BACKOFF } from './login-backoff.contract.ts';
import { MemoryLoginBackoff } from './memory-login-backoff.ts';

loginBackoffContract('memory', () => new MemoryLoginBackoff(CONTRACT_BACKOFF));
