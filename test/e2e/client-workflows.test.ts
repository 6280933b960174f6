/**
 * What a new user does first: start Nodegate as the README's quick start does (no configuration, a fresh
 * data directory), take the key its banner prints, and do ordinary work with ethers v6, viem and Foundry's `cast`,
 * each with its default settings (but ethers' own 250 ms answer cache, see below): deploy a contract, send 20 transactions in a row waiting for each, then trace
 * (a transaction, a call and a block). Every client must finish with no call refused. The hosted-style plans would
 * refuse this (a transaction costs ~400 compute units); the embedded default's development plan must not.
 */
import { clientWorkflows } from '../helpers/client-workflows.ts';

clientWorkflows('real client workflows on the key the quick start prints');
