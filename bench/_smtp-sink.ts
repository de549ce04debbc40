import { SMTPServer } from 'smtp-server';

/**
 * The loopback mail relay of bench/campaigns.ts, in its own process so that receiving 100,000 mails
 * does not share the server's CPU: accepts everything, counts messages and distinct Message-IDs.
 * Prints `{"port":…}` once listening; answers "count" on stdin with `{"received":…,"distinct":…}`.
 */
let received = 0;
const ids = new Set<string>();
const server = new SMTPServer({
  logger: false,
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  size: 1024 * 1024,
  onData(stream, _session, callback) {
    let head = '';
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 4096) head += chunk.toString('latin1');
    });
    stream.on('end', () => {
      received++;
      const id = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1];
      if (id) ids.add(id);
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.server.address() as { port: number }).port }) + '\n');
});
process.stdin.setEncoding('utf8');
process.stdin.on('data', () => process.stdout.write(JSON.stringify({ received, distinct: ids.size }) + '\n'));
process.stdin.on('end', () => server.close(() => process.exit(0)));
