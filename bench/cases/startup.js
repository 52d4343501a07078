// Start-up: node -e 0, bds --version and bds --help, interleaved (bench/startup.js): the median wall time and the
// mean CPU time, on this Node and on each pinned Node already installed; and the standalone binary against its
// own Node's node -e 0, when both are there. Once per column.

import fs from 'node:fs';
import path from 'node:path';
import { NODE_LINE as BINARY_NODE } from '../../scripts/build-binary.js';
import { PINNED, pinnedNodePath } from '../../scripts/node-from-npm.js';
import { ms, ratio } from '../format.js';
import { ROOT } from '../harness.js';
import { log } from '../measure.js';
import { timeCommands } from '../startup.js';

const BIN = path.join(ROOT, 'bin', 'bds.js');
const BINARY = path.join(ROOT, 'release', 'bds-linux-x64');
/** The contract's "Speed": within this many times node -e 0 on Node 22 and later, and on Node 20. */
const LIMIT = 1.2;
const LIMIT_NODE_20 = 1.5;

/**
 * Start-up: node -e 0, bds --version and bds --help, interleaved (bench/startup.js), on this Node and on each
 * pinned Node of scripts/node-from-npm.js that is installed already (the bench installs nothing: `node
 * scripts/node-from-npm.js 22` does); and release/bds-linux-x64 against its own Node, when both are there.
 * HOME is the user's: the first, uncounted round fills Node's compile cache, as any first run does.
 */
function startup(runs) {
  const nodes = [{ version: process.versions.node, file: process.execPath }];
  for (const major of Object.keys(PINNED).map(Number)) {
    const { version } = PINNED[major];
    const file = pinnedNodePath(major);
    if (major >= 20 && version !== process.versions.node && fs.existsSync(file)) nodes.push({ version, file });
  }
  const cases = nodes.flatMap(({ version, file }) => [
    [`${version} node`, file, ['-e', '0']],
    [`${version} version`, file, [BIN, '--version']],
    [`${version} help`, file, [BIN, '--help']],
  ]);
  const binaryNode = PINNED[BINARY_NODE] && pinnedNodePath(BINARY_NODE);
  const binary = fs.existsSync(BINARY) && binaryNode && fs.existsSync(binaryNode);
  if (binary) cases.push(['binary version', BINARY, ['--version']], ['binary help', BINARY, ['--help']]);
  const timed = Object.fromEntries(timeCommands(cases, runs).map((result) => [result.name, result]));
  return {
    nodes: nodes.map(({ version }) => ({
      version,
      node: timed[`${version} node`],
      showVersion: timed[`${version} version`],
      showHelp: timed[`${version} help`],
    })),
    binary: binary
      ? {
          version: PINNED[BINARY_NODE].version,
          node: timed[`${PINNED[BINARY_NODE].version} node`],
          showVersion: timed['binary version'],
          showHelp: timed['binary help'],
        }
      : undefined,
  };
}

export default {
  measures: 'bds --version and bds --help / node -e 0 (wall time), on each Node and the standalone binary',
  once(_bench, { loadName, options }) {
    log(`${loadName}: start-up, ${options.startupRuns} runs each`);
    return { start: startup(options.startupRuns) };
  },
  rows({ row, loads, present, options }) {
    // Start-up is judged on the quiet machine; on the busy one, where a new process waits for a core as long
    // as the scheduler pleases, the wall times are loose and shown for information (the CPU times are not).
    const startRatio = (run, node, limit, load) => {
      const value = run.wallMedian / node.wallMedian;
      const missed = load === 'quiet' && Number(ratio(value)) > limit;
      return `${ratio(value)}${missed ? ' MISSED' : ''} (${ms(run.wallMedian)}; CPU ${ratio(run.cpuMean / node.cpuMean)})`;
    };
    const startFirst = loads[present[0]].start;
    const rows = startFirst.nodes.flatMap(({ version }, i) => {
      const limit = Number(version.split('.')[0]) >= 22 ? LIMIT : LIMIT_NODE_20;
      return [
        row(
          `Node ${version}: node -e 0, median of ${options.startupRuns}`,
          ({ start }) => `${ms(start.nodes[i].node.wallMedian)} (CPU ${ms(start.nodes[i].node.cpuMean)})`,
        ),
        row(
          `**Node ${version}: bds --version / node -e 0**`,
          ({ start }, load) => startRatio(start.nodes[i].showVersion, start.nodes[i].node, limit, load),
          `≤ ${limit} (quiet)`,
        ),
        row(
          `**Node ${version}: bds --help / node -e 0**`,
          ({ start }, load) => startRatio(start.nodes[i].showHelp, start.nodes[i].node, limit, load),
          `≤ ${limit} (quiet)`,
        ),
      ];
    });
    if (startFirst.binary) {
      rows.push(
        row(
          `**release/bds-linux-x64 --version / its Node's (${startFirst.binary.version}) -e 0**`,
          ({ start }, load) => startRatio(start.binary.showVersion, start.binary.node, LIMIT, load),
          `≤ ${LIMIT} (quiet)`,
        ),
        row(
          `**release/bds-linux-x64 --help / its Node's -e 0**`,
          ({ start }, load) => startRatio(start.binary.showHelp, start.binary.node, LIMIT, load),
          `≤ ${LIMIT} (quiet)`,
        ),
      );
    }
    return rows;
  },
};
