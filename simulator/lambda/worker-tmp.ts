/**
 * The part of the worker's code (see worker-bootstrap.ts, which includes it before it loads the handler) that gives a
 * Lambda execution environment its own `/tmp`, as AWS does: each environment starts with an empty `/tmp` of its own,
 * kept while it stays warm (https://docs.aws.amazon.com/lambda/latest/dg/configuration-ephemeral-storage.html).
 *
 * The environment's directory is `workerData.tmpDirectory` (created by the execution environment, removed when it is
 * disposed); the worker's `TMPDIR` names it, so `os.tmpdir()` returns it. A literal `/tmp` path given to node:fs or
 * node:fs/promises (`/tmp` itself or a path under it: the path arguments of the calls that take paths, their Sync and
 * callback forms, streams, watchers) is read as the same path under the environment's directory. Not redirected: a
 * path under the function's code directory, under the working directory (the project, when it is itself under /tmp)
 * or under the environment's directory already, a directory below /tmp on the way to the first two (the module
 * loader's realpath reads each ancestor), a relative path, a file descriptor or FileHandle (their path was redirected when opened), and
 * what a child process or a native addon opens.
 *
 * A JavaScript source string, no backticks in it (it is spliced into the bootstrap's own template text).
 */
export const WORKER_TMP_SOURCE = String.raw`
if (typeof workerData.tmpDirectory === 'string') {
  const tmpDirectory = workerData.tmpDirectory;
  // the directories whose files are the app's and the simulator's own, not the environment's /tmp: the function's code
  // and the working directory (the project: its node_modules); a project under /tmp stays where it is
  const keptRoots = [path.resolve(workerData.taskRoot), path.resolve(process.cwd())];
  // a path in a kept directory, or on the way to one below /tmp (the module loader's realpath walks each ancestor);
  // /tmp itself is the environment's (a directory there too)
  const kept = (text) => {
    const resolved = path.resolve(text);
    if (resolved === '/tmp') return false;
    return keptRoots.some((root) => resolved === root || resolved.startsWith(root + path.sep) || root.startsWith(resolved + path.sep));
  };
  const { fileURLToPath } = requireBuiltin('node:url');
  // the path under the environment's directory, or undefined when the path is not a literal /tmp one
  const redirectedPath = (text) => {
    if (text !== '/tmp' && !text.startsWith('/tmp/')) return undefined;
    if (text === tmpDirectory || text.startsWith(tmpDirectory + '/') || kept(text)) return undefined;
    return tmpDirectory + text.slice('/tmp'.length);
  };
  const redirect = (value) => {
    if (typeof value === 'string') return redirectedPath(value) ?? value;
    if (value instanceof URL && value.protocol === 'file:') {
      const redirected = redirectedPath(fileURLToPath(value));
      return redirected === undefined ? value : pathToFileURL(redirected);
    }
    if (Buffer.isBuffer(value)) {
      const redirected = redirectedPath(value.toString('utf8'));
      return redirected === undefined ? value : Buffer.from(redirected, 'utf8');
    }
    return value;
  };
  // the calls that take a path, and which of their arguments are paths (symlink's first is the link's content)
  const PATHS = {
    access: [0], appendFile: [0], chmod: [0], chown: [0], copyFile: [0, 1], cp: [0, 1], createReadStream: [0], createWriteStream: [0],
    exists: [0], lchmod: [0], lchown: [0], link: [0, 1], lstat: [0], lutimes: [0], mkdir: [0], mkdtemp: [0], open: [0], openAsBlob: [0],
    opendir: [0], readdir: [0], readFile: [0], readlink: [0], realpath: [0], rename: [0, 1], rm: [0], rmdir: [0], stat: [0], statfs: [0],
    symlink: [1], truncate: [0], unlink: [0], utimes: [0], watch: [0], watchFile: [0], unwatchFile: [0], writeFile: [0],
  };
  const custom = requireBuiltin('node:util').promisify.custom;
  const wrap = (real, positions, ofCustom = false) => {
    const wrapped = function (...args) {
      for (const position of positions) if (position < args.length) args[position] = redirect(args[position]);
      return new.target === undefined ? real.apply(this, args) : Reflect.construct(real, args, new.target);
    };
    Object.defineProperty(wrapped, 'name', { value: real.name, configurable: true });
    Object.defineProperty(wrapped, 'length', { value: real.length, configurable: true });
    for (const key of Object.keys(real)) wrapped[key] = real[key];
    // exists' promisified form (its promisify.custom, whose own custom is itself)
    if (!ofCustom && typeof real[custom] === 'function') wrapped[custom] = wrap(real[custom], positions, true);
    else if (ofCustom) wrapped[custom] = wrapped;
    return wrapped;
  };
  const fsPromises = requireBuiltin('node:fs/promises');
  for (const [name, positions] of Object.entries(PATHS)) {
    for (const [target, key] of [[fs, name], [fs, name + 'Sync'], [fsPromises, name]]) {
      if (typeof target[key] === 'function') target[key] = wrap(target[key], positions);
    }
  }
  if (typeof fs.realpathSync.native === 'function') fs.realpathSync.native = wrap(fs.realpathSync.native, [0]);
  if (typeof fs.realpath.native === 'function') fs.realpath.native = wrap(fs.realpath.native, [0]);
  requireBuiltin('node:module').syncBuiltinESMExports();
}
`;
