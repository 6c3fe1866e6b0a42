export { repairMessages, repairPlaceholders } from './repair-messages.js';
export { validateMessages } from './validate-messages.js';
export {
  type Repair,
  type RepairMessagesOptions,
  type RepairResult,
  type RepairType,
  repairTypes,
  type ValidateMessagesOptions,
  type ValidationIssue,
  type ValidationIssueType,
  type ValidationResult,
  type ValidationTarget,
  validationIssueTypes,
  validationTargets,
} from './validation-issue.js';
