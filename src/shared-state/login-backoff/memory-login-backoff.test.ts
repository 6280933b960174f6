import { loginBackoffContract, CONTRACT_BACKOFF } from './login-backoff.contract.ts';
import { LoginBackoff } from './login-backoff.ts';

loginBackoffContract('memory', () => new LoginBackoff(CONTRACT_BACKOFF));
