// Preloaded into every test process (scripts/run-tests.mjs). Each test file runs in a child process that sends its
// results to the runner over a pipe, and with --test-force-exit the child exits as soon as its tests end: results
// still waiting in the pipe's buffer were lost, and the runner counted fewer tests than ran (nodejs/node#64833).
// Blocking writes leave nothing behind at exit.
if (!process.stdout.isTTY) process.stdout._handle?.setBlocking?.(true);
