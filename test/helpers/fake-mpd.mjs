#!/usr/bin/env node
// A stand-in for mpd in the supervision tests: it reads the socket path from the config the engine wrote, greets and
// answers every command "OK" (idle waits), so a test controls when "mpd" dies without a real one playing.
// `--mode exit` fails at once the way a bad config does; `--mode ignore-term` ignores SIGTERM (then only SIGKILL ends it).
// `--mode seek-dead` plays a 3-second track and refuses the first two seeks the way MPD does when its decoder has
// finished the track and not yet begun the next ("Decoder is dead"). `--mode fail-then-stop` fails every track it is
// asked to play the way MPD fails a file no decoder reads: the first status after `playid` shows the track playing
// with the error, the next ones stopped on it, the error kept until `clearerror`; each change is told to `idle`.
// `--mode paused-fail-late-word` fails the first track of the queue when it is started paused (`seekid` with
// `pause 1`) the way MPD fails a stream it cannot reach under load: it stays paused on it, shows the next track's
// format and duration (its decoder moved on), and writes the failure to its log only after the next status read.
// `--mode held-scan` keeps every `update` running (status shows `updating_db`) until the process gets SIGUSR1, then
// tells `idle` the database changed; each `update` it takes is a line in `updates.log` beside its config.
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

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

/** held-scan: the update job that runs (0: none) and the last one given out. */
let scanning = 0;
let lastJob = 0;
if (mode === 'held-scan') {
  process.on('SIGUSR1', () => {
    scanning = 0;
    for (const idler of idlers) idler.write('changed: update\nchanged: database\nOK\n');
    idlers.clear();
  });
}

function heldScan(line) {
  if (line.startsWith('update')) {
    appendFileSync(path.join(path.dirname(conf), 'updates.log'), `${line}\n`);
    scanning = ++lastJob;
    return `updating_db: ${scanning}\n`;
  }
  if (line.startsWith('status'))
    return `state: stop\nplaylistlength: 0\n${scanning ? `updating_db: ${scanning}\n` : ''}`;
  return undefined;
}

let nextId = 1;
let deadSeeks = mode === 'seek-dead' ? 2 : 0;
/** The queue's files by id and the current song (fail-then-stop, paused-fail-late-word). */
const files = new Map();
let current = null;
const idlers = new Set();
function changed() {
  for (const idler of idlers) idler.write('changed: player\nOK\n');
  idlers.clear();
}
const position = (id) => [...files.keys()].indexOf(id);

/** The commands that keep the queue, as MPD answers them; undefined for any other. */
function queueReply(line) {
  if (line.startsWith('addid')) {
    const id = nextId++;
    files.set(id, /^addid "?([^"]*)"?/.exec(line)[1]);
    return `Id: ${id}\n`;
  }
  if (line.startsWith('clear') && !line.startsWith('clearerror')) {
    files.clear();
    current = null;
    return '';
  }
  if (line.startsWith('currentsong'))
    return current === null ? '' : `file: ${files.get(current)}\nPos: ${position(current)}\nId: ${current}\n`;
  return undefined;
}

/** fail-then-stop: whether the current song's failure was shown playing, and the error. */
let shownPlaying = false;
let error = null;

function failThenStop(line) {
  const queued = queueReply(line);
  if (queued !== undefined) return queued;
  if (line.startsWith('playid')) {
    current = Number(/\d+/.exec(line)[0]);
    shownPlaying = false;
    error = `Failed to decode ${files.get(current)}`;
    setImmediate(changed);
    return '';
  }
  if (line.startsWith('clearerror')) {
    error = null;
    return '';
  }
  if (line.startsWith('status')) {
    const song = current === null ? '' : `song: ${position(current)}\nsongid: ${current}\n`;
    const state = current !== null && !shownPlaying ? 'play' : 'stop';
    if (state === 'play') {
      shownPlaying = true;
      setImmediate(changed);
    }
    return `volume: -1\nstate: ${state}\n${song}playlistlength: ${files.size}\n${error ? `error: ${error}\n` : ''}`;
  }
  return '';
}

/** paused-fail-late-word: the log line still to write after a status read, once the first track was started. */
let lateWord = null;

function pausedFailLateWord(line) {
  const queued = queueReply(line);
  if (queued !== undefined) return queued;
  if (line.startsWith('seekid')) {
    current = Number(/\d+/.exec(line)[0]);
    if (position(current) === 0) lateWord = `exception: Failed to decode ${files.get(current)}\n`;
    setImmediate(changed);
    return '';
  }
  if (line.startsWith('status')) {
    if (current === null) return 'volume: -1\nstate: stop\nplaylistlength: 0\n';
    if (lateWord) {
      const word = lateWord;
      lateWord = null;
      setTimeout(() => process.stderr.write(word), 20);
    }
    return `volume: -1\nstate: pause\nsong: ${position(current)}\nsongid: ${current}\nelapsed: 0.000\nduration: 3.000\naudio: 44100:16:2\nplaylistlength: ${files.size}\n`;
  }
  return '';
}

/** The reply's lines before OK, or `{ ack }`: MPD refuses the command with that message. */
function answer(line) {
  if (mode === 'fail-then-stop') return failThenStop(line);
  if (mode === 'paused-fail-late-word') return pausedFailLateWord(line);
  if (mode === 'held-scan') {
    const held = heldScan(line);
    if (held !== undefined) return held;
  }
  if (mode === 'seek-dead') {
    if (line.startsWith('status'))
      return 'volume: -1\nstate: play\nsong: 0\nsongid: 1\nelapsed: 2.900\nduration: 3.000\nplaylistlength: 1\n';
    if (line.startsWith('currentsong')) return 'file: tones/a.flac\nduration: 3.000\nPos: 0\nId: 1\n';
    if (line.startsWith('seekcur') && deadSeeks > 0) {
      deadSeeks--;
      return { ack: 'Decoder is dead' };
    }
  }
  if (line.startsWith('status')) return 'state: stop\nplaylistlength: 0\n';
  if (line.startsWith('addid')) return `Id: ${nextId++}\n`;
  return '';
}
const ack = (index, line, message) => `ACK [52@${index}] {${line.split(' ')[0]}} ${message}\n`;

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
        let reply = '';
        for (const [index, command] of list.entries()) {
          const result = answer(command);
          if (typeof result === 'object') {
            reply += ack(index, command, result.ack);
            break;
          }
          reply += `${result}list_OK\n`;
        }
        connection.write(reply.endsWith('list_OK\n') ? `${reply}OK\n` : reply);
        list = null;
      } else if (list) list.push(line);
      else if (line.startsWith('idle')) idlers.add(connection);
      else {
        const result = answer(line);
        connection.write(typeof result === 'object' ? ack(0, line, result.ack) : `${result}OK\n`);
      }
    }
  });
  connection.on('error', () => undefined);
}).listen(socket);
