// Where Node's compile cache goes: bds's cache folder (src/core/settings/dirs.ts, which this mirrors because it
// must be known before any of dist/ loads), then compile-cache. $XDG_CACHE_HOME/bds, else on Windows
// %LOCALAPPDATA%\bds, else ~/.cache/bds.
'use strict';
const path = require('path');

/** The folder for this environment, system (process.platform) and home folder. */
function compileCacheFolder(env, platform, homedir) {
  const paths = platform === 'win32' ? path.win32 : path.posix;
  const named = (variable) => {
    const value = env[variable]?.trim();
    return value && paths.isAbsolute(value) ? value : undefined;
  };
  const base =
    named('XDG_CACHE_HOME') ??
    (platform === 'win32'
      ? (named('LOCALAPPDATA') ?? paths.join(homedir, 'AppData', 'Local'))
      : paths.join(homedir, '.cache'));
  return paths.join(base, 'bds', 'compile-cache');
}

module.exports = { compileCacheFolder };
