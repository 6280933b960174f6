import { execFileSync } from 'node:child_process';
import { startTestGateway } from '../helpers/gateway.ts';
const g = await startTestGateway();
process.stdout.write('started ' + g.url + '\n');
const OP = `${g.gw.secrets.operatorEmail}:${g.gw.secrets.operatorPassword}`;
const sh = (cmd: string) => { try { return execFileSync('bash', ['-c', cmd], { env: { ...process.env, GW: g.url, OP } }).toString(); } catch (e: any) { return 'ERR ' + e.message + e.stdout; } };
process.stdout.write(sh(`curl -s -u "$OP" $GW/api/v1/operator/plans | head -c 300`) + '\n');
await g.close();
