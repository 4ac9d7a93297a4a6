/** A plan in words, for a terminal (`holdfast plan`); `printOut` makes it inert. */
import type { PlanReport, ProviderPlan } from './plan-report.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function removalLines(plan: ProviderPlan): string[] {
  const removal = plan.remove;
  if (removal === null) return [];
  const lines = removal.consumers.map(({ key, login }) => `  - remove  ${key} (login ${login})`);
  if (removal.leavesLogins)
    lines.push(`    management: ${plan.management}: their logins are left on the backend; only their records go`);
  if (!removal.heldBack) return lines;
  const said = `${plural(removal.consumers.length, 'removal')} of ${removal.of} consumers is more than the guard allows (${removal.guard}; change ${removal.change ?? ''})`;
  if (removal.confirmed)
    return [
      ...lines,
      `    the mass-removal guard would hold this back, but a person confirmed exactly this change: ${said}`,
    ];
  return [
    ...lines,
    `    held back by the mass-removal guard: ${said}; nothing in this change (creates and changes included) is applied until a person confirms it`,
    `    once holdfast run holds it back, confirm with: ${removal.confirmWith ?? ''}`,
  ];
}

function providerLines(plan: ProviderPlan): string[] {
  const head = `${plan.provider} (${plan.adapter}), from ${plan.file}:`;
  if (plan.invalid !== null)
    return [
      head,
      '  ! the file is refused whole; the last good desired state stays in force:',
      ...plan.invalid.map((p) => `      ${p}`),
    ];
  const lines = [head];
  for (const c of plan.create)
    lines.push(`  + create  ${c.key} (login ${c.login}) at ${c.source}`, ...c.notes.map((n) => `      note: ${n}`));
  for (const c of plan.change)
    lines.push(
      `  ~ change  ${c.key} (login ${c.login}) at ${c.source}`,
      ...c.differences.map((d) => `      ${d}`),
      ...c.notes.map((n) => `      note: ${n}`),
    );
  lines.push(...removalLines(plan));
  for (const r of plan.refused) {
    lines.push(
      `  ! refused ${r.key}${r.keepsAccepted ? ' (keeps its last accepted spec)' : ''}`,
      ...r.problems.map((p) => `      ${p}`),
    );
  }
  for (const d of plan.drifted)
    lines.push(
      `  ? drifted ${d.key} (login ${d.login}): ${d.reason}${d.node ? ` on ${d.node}` : ''}: ${d.detail}; a check would apply it again`,
    );
  for (const n of plan.notAsked) lines.push(`  ? not asked ${n.key}: ${n.why}`);
  const counts = [
    `${plan.create.length} to create`,
    `${plan.change.length} to change`,
    `${plan.remove?.consumers.length ?? 0} to remove${plan.remove?.heldBack && !plan.remove.confirmed ? ' (held back)' : ''}`,
    `${plan.refused.length} refused`,
    `${plan.drifted.length} drifted now`,
    `${plan.unchanged} unchanged`,
    ...(plan.notAsked.length > 0 ? [`${plan.notAsked.length} not asked`] : []),
    ...(plan.unreadable > 0 ? [`${plan.unreadable} records unreadable (left alone)`] : []),
  ];
  lines.push(`  ${counts.join(', ')}`);
  return lines;
}

const VERDICT: Record<PlanReport['exitCode'], string> = {
  0: 'nothing would change',
  1: 'changes would be made',
  2: 'something is refused, invalid or could not be asked',
};

export function formatPlan(report: PlanReport): string {
  return [
    ...report.providers.flatMap((p) => [...providerLines(p), '']),
    `plan: ${VERDICT[report.exitCode]} (exit ${report.exitCode})`,
  ].join('\n');
}
