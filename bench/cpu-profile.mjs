// Preloaded into a Nodegate child by bench/profile.ts (`--cpu-prof` is not allowed in NODE_OPTIONS, and would
// profile the start-up too): samples from SIGUSR2 to exit, then writes the profile to $NODEGATE_CPU_PROFILE.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let started = false;
process.on('SIGUSR2', () => {
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 100 });
  session.post('Profiler.start');
  started = true;
});
process.on('exit', () => {
  // An in-thread session answers synchronously, so the file is written before the process ends.
  if (started) session.post('Profiler.stop', (err, res) => { if (!err) writeFileSync(process.env.NODEGATE_CPU_PROFILE, JSON.stringify(res.profile)); });
});
