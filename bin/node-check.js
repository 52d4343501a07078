// Which Node.js bds needs, checked by bin/bds.js before anything else is loaded. Plain CommonJS with no
// syntax newer than Node 12, so that an old Node reaches the one-line message instead of failing on the code
// itself.

var NEEDED = { major: 20, minor: 19 };

/** Whether a `process.versions.node` string ("18.20.4", "20.19.0", "24.1.0-pre") is older than NEEDED. */
function nodeTooOld(version) {
  var match = /^v?(\d+)\.(\d+)/.exec(String(version));
  if (!match) return false; // an unknown form: let it try rather than refuse a Node we cannot read
  var major = Number(match[1]);
  var minor = Number(match[2]);
  return major < NEEDED.major || (major === NEEDED.major && minor < NEEDED.minor);
}

/** The one line (without its newline) for stderr on a Node that is too old. */
function tooOldMessage(version) {
  return (
    'bds: Node.js ' + version + ' is too old; bds needs Node.js ' + NEEDED.major + '.' + NEEDED.minor + ' or newer'
  );
}

exports.NEEDED = NEEDED;
exports.nodeTooOld = nodeTooOld;
exports.tooOldMessage = tooOldMessage;
