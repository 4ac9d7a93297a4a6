/**
 * `holdfast doctor`: one line per problem this process would meet, with what to do; exits 1
 * when there is any. The configuration's own problems (an admin secret that cannot be read or
 * is empty, among them) are listed one a line too.
 */
import { isHoldfastError } from '../errors/holdfast-error.js';
import { doctorProblems } from '../doctor/doctor.js';
import { load, processScrubber } from './load.js';
import { printOut } from '../text/terminal-text.js';

export async function doctorCommand(options: { config?: string }): Promise<number> {
  const uid = process.getuid?.() ?? -1;
  let problems: string[];
  try {
    const { config, scrubber } = await load(options.config);
    problems = await doctorProblems(config, scrubber);
  } catch (error) {
    if (!isHoldfastError(error, 'CONFIG_INVALID')) throw error;
    const [headline = '', ...lines] = error.message.split('\n');
    problems = (lines.length > 0 ? lines : [headline]).map(
      (line) => `configuration: ${line.trim()}; correct it, or the file it names`,
    );
  }
  const out = problems.map((p) => `holdfast doctor: ${processScrubber.scrub(p)}\n`).join('');
  printOut(out || `holdfast doctor: no problem found (as uid ${uid})\n`);
  if (problems.length > 0)
    printOut(`holdfast doctor: ${problems.length} problem${problems.length === 1 ? '' : 's'} (as uid ${uid})\n`);
  return problems.length > 0 ? 1 : 0;
}
