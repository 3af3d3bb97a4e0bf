/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview and SubjectAccessReview: create-only,
 * never stored; the strategy checks the request (ValidateSubjectAccessReviewSpec) and the
 * caller fills status from its authorizer.
 */

import type { FieldError, KubeObject, Strategy } from '../types.ts';
import { recordOf, str } from './common.ts';
import { invalid } from './field-errors.ts';

function validateReviewSpec(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const errs: FieldError[] = [];
  if (spec.resourceAttributes != null && spec.nonResourceAttributes != null) {
    errs.push(
      invalid(
        'spec.nonResourceAttributes',
        spec.nonResourceAttributes,
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  }
  if (spec.resourceAttributes == null && spec.nonResourceAttributes == null) {
    errs.push(
      invalid(
        'spec.resourceAttributes',
        null,
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  }
  return errs;
}

export function selfSubjectAccessReviewStrategy(): Strategy {
  return { validateCreate: validateReviewSpec };
}

export function subjectAccessReviewStrategy(): Strategy {
  return {
    validateCreate(obj) {
      const errs = validateReviewSpec(obj);
      const spec = recordOf(obj.spec);
      const groups = Array.isArray(spec.groups) ? spec.groups : [];
      if (!str(spec.user) && groups.length === 0)
        errs.push(invalid('spec.user', str(spec.user), 'at least one of user or group must be specified'));
      return errs;
    },
  };
}

/**
 * LocalSubjectAccessReview (ValidateLocalSubjectAccessReview): a SubjectAccessReview scoped to
 * metadata.namespace; the resource attributes must name that namespace and non-resource
 * attributes are refused.
 */
export function localSubjectAccessReviewStrategy(): Strategy {
  const sar = subjectAccessReviewStrategy();
  return {
    validateCreate(obj, ctx) {
      const spec = recordOf(obj.spec);
      const errs = sar.validateCreate!(obj, ctx);
      const ra = recordOf(spec.resourceAttributes);
      const ns = obj.metadata?.namespace ?? '';
      if (spec.resourceAttributes != null && str(ra.namespace) !== ns)
        errs.push(
          invalid('spec.resourceAttributes.namespace', str(ra.namespace), 'must match metadata.namespace'),
        );
      if (spec.nonResourceAttributes != null)
        errs.push(
          invalid(
            'spec.nonResourceAttributes',
            spec.nonResourceAttributes,
            'disallowed on this kind of request',
          ),
        );
      return errs;
    },
  };
}
