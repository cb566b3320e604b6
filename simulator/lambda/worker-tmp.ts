/**
 * The part of the worker's code (see worker-bootstrap.ts, which includes it before it loads the handler) that gives a
 * Lambda execution environment its own `/tmp`, as AWS does: each environment starts with an empty `/tmp` of its own,
 * kept while it stays warm (https://docs.aws.amazon.com/lambda/latest/dg/configuration-ephemeral-storage.html).
 *
 * The environment's directory is `workerData.tmpDirectory` (created by the execution environment, removed when it is
 * disposed); the worker's `TMPDIR` names it, so `os.tmpdir()` returns it. A `/tmp` path (`/tmp` itself or a path
 * under it, however spelled: the path is first made absolute from the working directory, with `.`, `..` and repeated
 * slashes resolved) is read as the same path under the environment's directory when it is given to:
 * - node:fs or node:fs/promises (the path arguments of the calls that take paths, their Sync and callback forms,
 *   streams, watchers; an absolute symlink target);
 * - `require` (so a module written to `/tmp` loads, and the modules it requires are found next to it);
 * - node:child_process (spawn, spawnSync, execFile, execFileSync, fork, exec, execSync, and the promisified forms): the
 *   program's path, its `cwd`, an argument that is a `/tmp` path or whose value after its first `=` is one
 *   (`--output=/tmp/x`), and a `/tmp` path in a shell command (exec, execSync, the `shell` option of spawn and execFile),
 *   also next to a shell operator (`2>/tmp/e`, `cd /tmp&&`, `$(cat /tmp/x)`) and inside quotes (they may hold a
 *   script: `sh -c "cd /tmp; ..."`), so a program written to `/tmp` runs there and reads and writes the files the
 *   function does.
 * Not redirected: a path under the function's code directory, under the working directory (the project, when it is
 * itself under /tmp) or under the environment's directory already, a directory below /tmp on the way to the first two
 * (the module loader's realpath reads each ancestor), a file descriptor or FileHandle (their path was redirected when
 * opened), a relative symlink target (read from the link's own directory), `import()` of a `/tmp` module (the ES
 * module loader reads the literal path), a `/tmp` path inside a longer argument of a program run without a shell
 * (`-o/tmp/x`, a message or JSON that mentions `/tmp`: the program gets it as written, as on AWS), and what a child
 * process or a native addon opens itself.
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
  // the path under the environment's directory, or undefined when the path is not a /tmp one: the path as the system
  // reads it (made absolute from the working directory, '.', '..' and repeated slashes resolved), so every spelling
  // of a /tmp path is the environment's (a path with a NUL byte is left for node:fs to refuse)
  const redirectedPath = (spelled) => {
    if (spelled.includes('\0')) return undefined;
    const text = path.resolve(spelled);
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
  // the calls that take a path, and which of their arguments are paths; symlink's first is the link's content, read
  // when the link is followed: an absolute /tmp target is the environment's, a relative one is read from the link's
  // own directory (the environment's already) and kept as it is
  const PATHS = {
    access: [0], appendFile: [0], chmod: [0], chown: [0], copyFile: [0, 1], cp: [0, 1], createReadStream: [0], createWriteStream: [0],
    exists: [0], lchmod: [0], lchown: [0], link: [0, 1], lstat: [0], lutimes: [0], mkdir: [0], mkdtemp: [0], open: [0], openAsBlob: [0],
    opendir: [0], readdir: [0], readFile: [0], readlink: [0], realpath: [0], rename: [0, 1], rm: [0], rmdir: [0], stat: [0], statfs: [0],
    symlink: [-1, 1], truncate: [0], unlink: [0], utimes: [0], watch: [0], watchFile: [0], unwatchFile: [0], writeFile: [0],
  };
  const custom = requireBuiltin('node:util').promisify.custom;
  const wrap = (real, positions, ofCustom = false) => {
    const wrapped = function (...args) {
      for (const position of positions) {
        // -1: the first argument, when it is an absolute path (a symlink's target)
        if (position === -1) {
          if (typeof args[0] === 'string' && path.isAbsolute(args[0])) args[0] = redirect(args[0]);
        } else if (position < args.length) {
          args[position] = redirect(args[position]);
        }
      }
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
  // require: a /tmp module (an absolute path, or a relative one from a module outside /tmp that leads there) is the
  // environment's file; the modules it requires in turn are found next to it
  const Module = requireBuiltin('node:module');
  const realResolveFilename = Module._resolveFilename;
  Module._resolveFilename = function _resolveFilename(request, parent, ...rest) {
    if (typeof request === 'string') {
      const relative = request === '.' || request === '..' || request.startsWith('./') || request.startsWith('../');
      const from = parent !== undefined && parent !== null && typeof parent.filename === 'string' ? path.dirname(parent.filename) : undefined;
      const absolute = path.isAbsolute(request) ? request : relative && from !== undefined ? path.resolve(from, request) : undefined;
      const redirected = absolute === undefined ? undefined : redirectedPath(absolute);
      if (redirected !== undefined) request = redirected;
    }
    return realResolveFilename.call(this, request, parent, ...rest);
  };
  // node:child_process: a program under /tmp (the command, a path), its working directory, and the /tmp paths of its
  // arguments or its shell command are the environment's; what the program itself opens is not redirected (TMPDIR
  // names the environment's directory)
  // a shell command (exec, execSync, spawn or execFile with the shell option): a /tmp path that starts the text or
  // follows whitespace, a quote, '=' or a shell operator ('>', '<', '|', ';', '&', '(' of a subshell or '$(', a
  // backtick: '2>/tmp/e', 'cd /tmp&&', '$(cat /tmp/x)') and ends at whitespace, a quote, an operator (';', '&', '|',
  // ')', a backtick, '>', '<') or the end; quoted text too (a shell's quotes may hold a script: sh -c "cd /tmp; ...")
  const TMP_IN_SHELL = /(^|[\s'"=<>|;&(\x60])(\/tmp(?:\/[^\s'"<>|;&)\x60]*)?)(?=$|[\s'"<>|;&)\x60])/g;
  const inShell = (value) => (typeof value === 'string' ? value.replace(TMP_IN_SHELL, (whole, lead, spelled) => lead + (redirectedPath(spelled) ?? spelled)) : value);
  // a plain argument (no shell): only when the whole argument is a /tmp path ('/tmp/in.mp4', spaces and all, as the
  // program gets it as one word), or an option's value after its first '=' is ('--output=/tmp/x', 'of=/tmp/x'; the
  // option's name has no whitespace); a text that mentions /tmp (a message, JSON) goes to the program as written
  const TMP_ARGUMENT = /^([^\s=]*=)?(\/tmp(?:\/[\s\S]*)?)$/;
  const inArgument = (value) => {
    const match = typeof value === 'string' ? TMP_ARGUMENT.exec(value) : null;
    if (match === null) return value;
    const redirected = redirectedPath(match[2]);
    return redirected === undefined ? value : (match[1] ?? '') + redirected;
  };
  // a command with no slash is looked up in PATH, not in the working directory; one with whitespace is read as a
  // shell command
  const command = (value) => (typeof value !== 'string' ? redirect(value) : /\s/.test(value) ? inShell(value) : value.includes('/') ? redirect(value) : value);
  const withCwd = (options) => {
    if (options === null || typeof options !== 'object' || Array.isArray(options) || options.cwd === undefined || options.cwd === null) return options;
    return { ...options, cwd: redirect(options.cwd) };
  };
  const childProcess = requireBuiltin('node:child_process');
  // (file, [args], [options], ...): spawn, spawnSync, execFile, execFileSync, fork
  // with the shell option, the program and its arguments are joined into one shell command
  const withFile = (real) => function (file, ...rest) {
    const at = Array.isArray(rest[0]) ? 1 : 0;
    const options = rest[at];
    const shell = options !== null && typeof options === 'object' && !Array.isArray(options) && Boolean(options.shell);
    if (at === 1) rest[0] = rest[0].map(shell ? inShell : inArgument);
    rest[at] = withCwd(options);
    // with the shell option the program starts the shell command (a path already redirected is not redirected again)
    if (shell) file = inShell(file);
    return real.call(this, command(file), ...rest);
  };
  // (command, [options], ...): exec, execSync (a shell's command)
  const withShell = (real) => function (text, options, ...rest) {
    return real.call(this, inShell(text), withCwd(options), ...rest);
  };
  for (const [name, form] of [['spawn', withFile], ['spawnSync', withFile], ['execFile', withFile], ['execFileSync', withFile], ['fork', withFile], ['exec', withShell], ['execSync', withShell]]) {
    const real = childProcess[name];
    const wrapped = form(real);
    Object.defineProperty(wrapped, 'name', { value: real.name, configurable: true });
    Object.defineProperty(wrapped, 'length', { value: real.length, configurable: true });
    // exec's and execFile's promisified forms (their promisify.custom) resolve to { stdout, stderr }
    if (typeof real[custom] === 'function') wrapped[custom] = form(real[custom]);
    childProcess[name] = wrapped;
  }
  requireBuiltin('node:module').syncBuiltinESMExports();
}
`;
