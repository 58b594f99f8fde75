#!/usr/bin/env node
// A stand-in for mpd in the supervision tests: it reads the socket path from the config the engine wrote, greets and
// answers every command "OK" (idle waits), so a test controls when "mpd" dies without a real one playing.
// `--mode exit` fails at once the way a bad config does; `--mode ignore-term` ignores SIGTERM (then only SIGKILL ends it).
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';

const args = process.argv.slice(2);
const mode = args[0] === '--mode' ? args[1] : 'serve';
const conf = args[args.length - 1];
const socket = /^bind_to_address "(\/[^"]+)"/m.exec(readFileSync(conf, 'utf8'))?.[1];

if (mode === 'exit') {
  process.stderr.write('fake-mpd: Failed to open audio output "azcd"\n');
  process.exit(1);
}
process.on('SIGTERM', () => {
  if (mode === 'ignore-term') return;
  rmSync(socket, { force: true });
  process.exit(0);
});

let nextId = 1;
function answer(line) {
  if (line.startsWith('status')) return 'state: stop\nplaylistlength: 0\n';
  if (line.startsWith('addid')) return `Id: ${nextId++}\n`;
  return '';
}

rmSync(socket, { force: true });
createServer((connection) => {
  connection.setEncoding('utf8');
  connection.write('OK MPD 0.23.5\n');
  let buffer = '';
  let list = null;
  connection.on('data', (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line === 'command_list_ok_begin') list = [];
      else if (line === 'command_list_end') {
        connection.write(list.map((command) => `${answer(command)}list_OK\n`).join('') + 'OK\n');
        list = null;
      } else if (list) list.push(line);
      else if (line.startsWith('idle')) continue;
      else connection.write(`${answer(line)}OK\n`);
    }
  });
  connection.on('error', () => undefined);
}).listen(socket);
