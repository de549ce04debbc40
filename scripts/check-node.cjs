// Runs before `npm start`, `npm test` and `npm run cli`: on an older Node.js they fail deep inside
// (`Unknown file extension ".ts"`, a vitest crash) instead of saying what is wrong. Written in
// plain ES5 + CommonJS so that any Node.js still in use can parse it. The required version is
// read from package.json's `engines.node` (">=MAJOR.MINOR"), so the two cannot drift.
'use strict';
var fs = require('fs');
var path = require('path');

var pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
var range = String((pkg.engines && pkg.engines.node) || '');
var wanted = /^>=\s*(\d+)\.(\d+)/.exec(range);
if (!wanted) {
  process.stderr.write('scripts/check-node.cjs: package.json engines.node must read ">=MAJOR.MINOR", got "' + range + '"\n');
  process.exit(1);
}
var have = process.versions.node.split('.');
var major = Number(have[0]);
var minor = Number(have[1]);
var needMajor = Number(wanted[1]);
var needMinor = Number(wanted[2]);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    'This service needs Node.js >= ' +
      needMajor +
      '.' +
      needMinor +
      ', but ' +
      process.execPath +
      ' is v' +
      process.versions.node +
      ': install Node.js 24 (`nvm install` reads .nvmrc, or https://nodejs.org/en/download) and run this again.\n',
  );
  process.exit(1);
}
