// `bds --version` and `bds --help` in a blink: the answers `npm run build` wrote, printed without loading the
// program. Used by bin/bds.js, and by the standalone binary's main script (scripts/sea-main.cjs), which loads
// the program only when this did not answer.
//
// CommonJS, and only what the answers need: fs, and tty for a terminal.
'use strict';
const fs = require('fs');

/**
 * `bds --version` and `bds --help` without loading commander and every command, as `npm run build` wrote them
 * (scripts/build-quick-answers.js): the help only for a stream that is not a terminal, or a terminal as wide as
 * it was rendered for (or wider, when nothing wraps). Written straight to the file descriptor: making
 * process.stdout would cost more than the rest. Whether it answered; anything else, or a build without the
 * answers, goes to the program as usual.
 */
function answeredQuickly(args) {
  if (args.length !== 1 || !['--version', '-V', '--help', '-h'].includes(args[0])) return false;
  let answers;
  try {
    answers = require('../dist/cli/quick-answers.json');
  } catch {
    return false;
  }
  let text = `${answers.VERSION}\n`;
  if (args[0] === '--help' || args[0] === '-h') {
    const terminal = isTerminal(1);
    const columns = terminal ? process.stdout.columns : undefined;
    if (!(columns === undefined || columns === answers.WIDTH || (answers.ANY_WIDER && columns > answers.WIDTH)))
      return false;
    text = answers.HELP;
  }
  try {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length;) at += fs.writeSync(1, bytes, at);
  } catch (error) {
    // As below: a reader that went away is not a failure, a full disk is. A pipe left non-blocking and full
    // takes the rest the slow way.
    if (error.code === 'EAGAIN') {
      process.stdout.write(text);
    } else if (error.code !== 'EPIPE') {
      process.stderr.write(`bds: cannot write the result to stdout: ${error.message}\n`);
      process.exitCode = 2;
    }
  }
  return true;
}

/**
 * A pipe or a file is no terminal, as fstat tells at once; tty (3 ms) only for a character device. Where fstat
 * fails on a good descriptor (EBADF for a console under Wine's Node 22), tty alone decides.
 */
function isTerminal(fd) {
  let characterDevice = true;
  try {
    characterDevice = fs.fstatSync(fd).isCharacterDevice();
  } catch {
    // tty decides below.
  }
  return characterDevice && require('tty').isatty(fd);
}

exports.answeredQuickly = answeredQuickly;
