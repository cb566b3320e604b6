/**
 * The starter app `idempotent-event-flow init <directory>` writes: the files of the template directory
 * (`init/template/` in the simulator package), copied with their placeholders filled in. Each template file ends in
 * `.tmpl` (so neither the simulator's build nor a type checker reads the templates as sources of this package), which
 * is dropped when written; a path segment that starts with `dot-` is written with a dot instead (`dot-gitignore.tmpl`
 * becomes `.gitignore`: npm does not pack a `.gitignore`). A placeholder is `{{name}}`, one of {@link StarterValues}.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registrySource, type PackageSource, type PackageSpecKey } from './package-source';

/** What every template file's name ends in; dropped when the file is written. */
export const TEMPLATE_SUFFIX = '.tmpl';

/** A path segment of a template file that starts with this is written with a leading dot instead. */
export const DOT_PREFIX = 'dot-';

/** The longest app name `init` accepts. */
export const APP_NAME_MAX_LENGTH = 64;

/**
 * The names `init` accepts for an app: lower-case letters and digits in words joined by single hyphens, starting with
 * a letter. Such a name is a valid npm package name and, in PascalCase, a valid CloudFormation stack name.
 */
export const APP_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** The values the placeholders of the templates take. */
export interface StarterValues extends Readonly<Record<PackageSpecKey, string>> {
  /** The app's name, its package.json `name` (e.g. `order-service`). */
  readonly appName: string;
  /** The app's stack name, the app name in PascalCase (e.g. `OrderService`). */
  readonly stackName: string;
  /** The version of the four packages the app depends on: the simulator's own. */
  readonly version: string;
  /** Where the four packages come from, in words (the specs are `constructsSpec`, `runtimeSpec`, `operatorSpec`, `simulatorSpec`). */
  readonly packagesFrom: string;
}

/** Why `init` wrote nothing: the target is not an empty directory. */
export class StarterRefusal extends Error {
  public override readonly name = 'StarterRefusal';
}

/** What is wrong with `name` as an app name, or undefined when `init` accepts it. */
export function appNameProblem(name: string): string | undefined {
  if (name.length > APP_NAME_MAX_LENGTH) return `'${name}' is not a valid app name: longer than ${APP_NAME_MAX_LENGTH} characters`;
  if (!APP_NAME_PATTERN.test(name)) {
    return `'${name}' is not a valid app name: use lower-case letters and digits in words joined by single hyphens, starting with a letter (e.g. order-service)`;
  }
  return undefined;
}

/**
 * The placeholders' values for an app named `appName` (valid: {@link appNameProblem}) on packages of `version`, from
 * `source` (@default the npm registry, at `version` exactly).
 */
export function starterValues(appName: string, version: string, source: PackageSource = registrySource(version)): StarterValues {
  const stackName = appName
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return { appName, stackName, version, ...source.specs, packagesFrom: source.said };
}

/** `text` with each `{{name}}` replaced by its value; a placeholder that is not one of {@link StarterValues} throws. */
export function renderTemplate(text: string, values: StarterValues, file = 'the template'): string {
  return text.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(values, name)) throw new Error(`${file} has the placeholder ${placeholder}, which init does not know`);
    return values[name as keyof StarterValues];
  });
}

/** A template file and where it is written, relative to the target directory (`/`-separated). */
export interface StarterFile {
  readonly template: string;
  readonly path: string;
}

/** The files of `templateDirectory` (sorted by where they are written), each with its path in the app. */
export function starterFiles(templateDirectory: string): StarterFile[] {
  const walk = (directory: string, prefix: string): StarterFile[] =>
    fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry): StarterFile[] => {
      const written = entry.name.startsWith(DOT_PREFIX) ? `.${entry.name.slice(DOT_PREFIX.length)}` : entry.name;
      const relative = prefix === '' ? written : `${prefix}/${written}`;
      if (entry.isDirectory()) return walk(path.join(directory, entry.name), relative);
      if (!entry.name.endsWith(TEMPLATE_SUFFIX)) throw new Error(`${path.join(directory, entry.name)} is in the starter's templates but does not end in ${TEMPLATE_SUFFIX}`);
      return [{ template: path.join(directory, entry.name), path: relative.slice(0, -TEMPLATE_SUFFIX.length) }];
    });
  return walk(templateDirectory, '').sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** What {@link writeStarter} writes. */
export interface StarterOptions {
  /** The directory to write into: created when missing, refused unless empty. */
  readonly target: string;
  /** The placeholders' values. */
  readonly values: StarterValues;
  /** The template files. */
  readonly templateDirectory: string;
}

/**
 * Writes the starter app into `options.target` and returns the paths written (relative to it, sorted). Refuses with a
 * {@link StarterRefusal}, writing nothing, when the target exists and is not an empty directory. Every template is
 * read and rendered before the first file is written, so a bad template writes nothing either.
 */
export function writeStarter(options: StarterOptions): string[] {
  const target = path.resolve(options.target);
  if (fs.existsSync(target)) {
    if (!fs.statSync(target).isDirectory()) throw new StarterRefusal(`${target} exists and is not a directory`);
    const entries = fs.readdirSync(target).sort();
    if (entries.length > 0) {
      const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', ...' : '');
      throw new StarterRefusal(`${target} is not empty (${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}: ${shown}): init writes only into a new or empty directory`);
    }
  }
  const rendered = starterFiles(options.templateDirectory).map((file) => ({
    path: file.path,
    text: renderTemplate(fs.readFileSync(file.template, 'utf8'), options.values, file.template),
  }));
  for (const file of rendered) {
    const destination = path.join(target, ...file.path.split('/'));
    fs.mkdirSync(path.dirname(destination), { recursive: true });
    fs.writeFileSync(destination, file.text, { flag: 'wx' });
  }
  return rendered.map((file) => file.path);
}
