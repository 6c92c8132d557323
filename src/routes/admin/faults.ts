// /admin/faults: the admin API's hold on `--faults` at run time (the injection itself is
// src/faults/injector.ts, the rules' syntax src/faults/rules.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { type FaultInjector, faultSetting } from '../../faults/injector.ts';
import {
  describeRule,
  type FaultRule,
  FaultSyntaxError,
  parseFaultRules,
  rulesText,
} from '../../faults/rules.ts';
import { badRequest } from '../../http/errors.ts';
import { registerAdmin } from './route.ts';

const faultRulesReply = Type.Object({
  faults: Type.String({ description: 'The rules in `--faults` syntax; empty: none' }),
  seed: Type.Union([Type.Integer(), Type.Null()], { description: 'The seed of their draws' }),
});

/**
 * The admin API's hold on `--faults` at run time (development profile, with --admin-token):
 * GET /admin/faults reads the rules, PUT replaces them (and their seed), DELETE removes them.
 */
export function faultRoutes(app: FastifyInstance, ctx: AppContext, faults: FaultInjector | undefined): void {
  if (!faults) return;
  const current = () => {
    const { rules, seed } = faults.rules;
    return { faults: rulesText(rules), seed: seed ?? null };
  };
  registerAdmin(app, ctx, {
    method: 'GET',
    path: '/faults',
    tag: 'admin',
    summary: 'Get the fault rules',
    description: 'The rules of `--faults` drawn for every request, and the seed of their draws.',
    status: 200,
    response: faultRulesReply,
    handler: async () => current(),
  });
  registerAdmin(app, ctx, {
    method: 'PUT',
    path: '/faults',
    tag: 'admin',
    summary: 'Set the fault rules',
    description:
      'Replaces the rules of `--faults` (`{"faults": "503:2%, latency:300ms:10%", "seed": 42}`) and starts their draws again from `seed` (a new one when left out). Under `--workers`, every worker draws them when this answers.',
    body: Type.Object({ faults: Type.String(), seed: Type.Optional(Type.Integer()) }),
    status: 200,
    response: faultRulesReply,
    async handler(req) {
      const body = req.body as Record<string, unknown> | null;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw badRequest('body: must be a JSON object {"faults": "<rules>", "seed": <n>}');
      const extra = Object.keys(body).find((k) => k !== 'faults' && k !== 'seed');
      if (extra !== undefined) throw badRequest(`body: "${extra}" is not a field (faults, seed)`);
      if (typeof body.faults !== 'string')
        throw badRequest('faults: must be a string of rules, e.g. "503:2%"');
      const { seed } = body;
      if (
        seed !== undefined &&
        !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) < 2 ** 31)
      )
        throw badRequest(`seed: must be a whole number from 0 to ${2 ** 31 - 1}`);
      let rules: FaultRule[];
      try {
        rules = body.faults.trim() === '' ? [] : parseFaultRules(body.faults);
      } catch (e) {
        if (e instanceof FaultSyntaxError) throw badRequest(`faults: ${e.message}`);
        throw e;
      }
      await faults.setting.change(faultSetting(rules, seed as number | undefined));
      req.log.warn({ faults: rules.map(describeRule), faultSeed: faults.rules.seed }, 'fault rules set');
      return current();
    },
  });
  registerAdmin(app, ctx, {
    method: 'DELETE',
    path: '/faults',
    tag: 'admin',
    summary: 'Remove the fault rules',
    description: 'No fault is drawn any more (the Helixd-Fault header still works).',
    status: 204,
    async handler(req) {
      await faults.setting.change(faultSetting([]));
      req.log.warn('fault rules removed');
    },
  });
}
