/**
 * The provider's policy, checked where rights are applied: before every apply (and every
 * removal), on the spec the worker is about to act on, whatever reached the record. The same
 * check the contributions loader runs (`src/policy/spec-check.ts`): values schema, policy,
 * reserved logins, `loginPrefix`, and the grant secret's path inside the provider's roots. A
 * removal widens no right, so only its login is judged: a policy tightened since the apply must
 * not leave the wider login behind. Pure and cheap; never on a routine check.
 */
import { checkSpec, describeSpecProblem, loginProblems, type SpecProblem } from '../src/policy/spec-check.js';
import { consumerIdOf } from '../src/store/consumer-key.js';
import type { DesiredSpec } from '../src/store/consumer-record.js';
import type { ProviderRuntime } from './provider-runtime.js';

export type Verdict =
  /** Go ahead, with the values as the adapter's schema parsed them. */
  | { kind: 'allowed'; values: unknown }
  /** Refused: why, naming where the spec came from and each field. */
  | { kind: 'refused'; refusal: string };

/** What is guarded: a record's desired spec, or a ticket's (which does not say where it was declared). */
export type GuardedSpec = Pick<DesiredSpec, 'login' | 'values' | 'secretPath'> & Partial<Pick<DesiredSpec, 'source'>>;

export function guardSpec(
  provider: ProviderRuntime,
  key: string,
  spec: GuardedSpec,
  effect: 'apply' | 'remove',
): Verdict {
  const subject = {
    id: consumerIdOf(key),
    login: spec.login,
    values: spec.values,
    secretPath: effect === 'apply' ? spec.secretPath : undefined,
  };
  const { values, problems } =
    effect === 'apply'
      ? checkSpec(provider.config, subject)
      : {
          values: spec.values,
          problems: loginProblems(provider.config, spec.login).map((reason): SpecProblem => ({
            field: 'login',
            reason,
          })),
        };
  if (problems.length === 0) return { kind: 'allowed', values };
  const said = problems.map((problem) => describeSpecProblem(problem, subject)).join('; ');
  return {
    kind: 'refused',
    refusal: `the spec ${spec.source === undefined ? 'its wait carries' : `declared at ${spec.source}`} is not what provider ${provider.config.name}'s configuration gives, so nothing was sent: ${said}`,
  };
}
