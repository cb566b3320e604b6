/**
 * The complexity measure of wildcard patterns against Event Ruler's own (aws/event-ruler,
 * src/test/software/amazon/event/ruler/MachineComplexityEvaluatorTest.java, the test named with each case; Event
 * Ruler is the matcher EventBridge runs), and the verdict from the complexities EventBridge accepted and refused in
 * its recorded answers (./vectors/localstack-eventbridge-event-patterns.json).
 */
import { describe, expect, it } from 'vitest';
import { compileEventPattern, UnsupportedPatternError } from '../../../operator/patterns/event-pattern';
import { HIGHEST_COMPLEXITY_ACCEPTED, judgeWildcardComplexity, LOWEST_COMPLEXITY_REFUSED, wildcardComplexity } from '../../../operator/patterns/wildcard-complexity';

describe('wildcardComplexity, as Event Ruler measures it', () => {
  // the wildcard patterns of each test (its exact, prefix and other patterns add nothing to the measure)
  it.each([
    ['testEvaluateOnlyWildcard', ['*'], 1],
    ['testEvaluateOnlyWildcardWithWildcardMatch', ['*', 'ab*c'], 3],
    ['testEvaluateWildcardPatternWithoutWildcards', ['abc'], 1],
    ['testEvaluateOneWildcardLeadingCharTwoTrailingCharactersDifferent', ['*ab'], 2],
    ['testEvaluateOneWildcardLeadingCharTwoTrailingCharactersEqual', ['*aa'], 3],
    ['testEvaluateOneWildcardSecondLastChar', ['a*b'], 2],
    ['testEvaluateOneWildcardTrailingChar', ['aa*'], 2],
    ['testEvaluateOneWildcardNormalPositionTwoTrailingCharactersDifferent', ['a*bc'], 2],
    ['testEvaluateOneWildcardNormalPositionTwoTrailingCharactersEqual', ['a*bb'], 3],
    ['testEvaluateOneWildcardNormalPositionThreeTrailingCharactersDifferent', ['a*bcb'], 3],
    ['testEvaluateOneWildcardNormalPositionThreeTrailingCharactersEqual', ['a*bbb'], 4],
    ['testEvaluateTwoWildcardsLeadingCharAndNormalPosition', ['*ab*ad'], 4],
    ['testEvaluateTwoWildcardsLeadingCharAndSecondLastChar', ['*ab*d'], 3],
    ['testEvaluateTwoWildcardsLeadingCharAndTrailingChar', ['*aba*'], 4],
    ['testEvaluateTwoWildcardsBothNormalPositionTwoTrailingCharactersEqual', ['a*b*bb'], 5],
    ['testEvaluateTwoWildcardsBothNormalPositionTwoTrailingCharactersDifferent', ['a*b*cb'], 4],
    ['testEvaluateTwoWildcardsBothNormalPositionTwoTrailingCharactersDifferentLastCharUnique', ['a*b*cd'], 3],
    ['testEvaluateTwoWildcardsNormalPositionAndSecondLastChar', ['a*b*b'], 4],
    ['testEvaluateTwoWildcardsNormalPositionAndTrailingChar', ['a*bb*'], 4],
    ['testEvaluateTwoWildcardsThirdLastCharAndTrailingChar', ['ab*b*'], 3],
    ['testEvaluateTwoWildcardsNoCommonPrefix', ['ab*c', 'x*xx'], 3],
    ['testEvaluateTwoWildcardsBothLeadingOneIsPrefixOfOther', ['*abc', '*abcde'], 4],
    ['testEvaluateTwoWildcardsBothNormalPosition', ['a*bcd', 'ab*cd'], 4],
    ['testEvaluateTwoWildcardsBothNormalPositionOneIsPrefixOfOther', ['a*bc', 'a*bcde'], 4],
    ['testEvaluateTwoWildcardsBothNormalPositionAllSameCharacter', ['a*aaa', 'aa*aa'], 7],
    ['testEvaluateTwoWildcardsOneNormalPositionAndOneSecondLastCharacter', ['a*bc', 'abc*d'], 4],
    ['testEvaluateTwoWildcardsOneNormalPositionAndOneSecondLastCharacterAllSameCharacter', ['a*aaa', 'aaa*a'], 6],
    ['testEvaluateTwoWildcardsOneNormalPositionAndOneSecondLastCharacterAllSameCharacterButLast', ['a*aax', 'aaa*x'], 5],
    ['testEvaluateTwoWildcardsOneNormalPositionAndOneTrailing', ['a*bc', 'abc*'], 4],
    ['testEvaluateTwoWildcardsOneNormalPositionAndOneTrailingAllSameCharacter', ['a*aa', 'aaa*'], 5],
    ['testEvaluateTwoWildcardsBothTrailingCharOneIsPrefixOfOther', ['abc*', 'abcde*'], 3],
    ['testEvaluateThreeWildcardsTransitionFromSameState', ['ab*cd', 'ab*wx', 'ab*yz'], 6],
    ['testEvaluateFourWildcardsLeadingCharNormalPositionThirdLastCharAndTrailingChar', ['*ab*b*b*'], 7],
    ['testEvaluateLongSequenceofWildcards', ['*a*a*a*a*a*a*a*a*'], 17],
    ['testEvaluateDuplicateWildcardPatterns', ['ab*c', 'ab*c'], 2],
    ['testEvaluateWordEndingInSameLetterThatFollowsWildcard', ['F*eatureFeature', 'Fe*atureFeature', 'Fea*tureFeature'], 10],
  ])('%s: %j has complexity %i', (_test, patterns, complexity) => {
    expect(wildcardComplexity(patterns)).toBe(complexity);
  });

  it('an escaped star is a literal character', () => {
    expect(wildcardComplexity(['a\\*b'])).toBe(1);
  });
});

describe('judgeWildcardComplexity: from what EventBridge accepted and refused', () => {
  it('accepts up to the complexity it accepted, refuses from the one it refused, and cannot tell between', () => {
    expect(judgeWildcardComplexity(HIGHEST_COMPLEXITY_ACCEPTED)).toBe('accepted');
    expect(judgeWildcardComplexity(HIGHEST_COMPLEXITY_ACCEPTED + 1)).toBe('unknown');
    expect(judgeWildcardComplexity(LOWEST_COMPLEXITY_REFUSED - 1)).toBe('unknown');
    expect(judgeWildcardComplexity(LOWEST_COMPLEXITY_REFUSED)).toBe('refused');
  });

  it('a pattern between the two stops the simulator with a reason, never a guess', () => {
    // complexity 9: three patterns sharing the prefix "*:stack/"
    const pattern = JSON.stringify({ detail: { stackId: [{ wildcard: '*:stack/aa/*' }, { wildcard: '*:stack/bb/*' }, { wildcard: '*:stack/cc/*' }] } });

    expect(() => compileEventPattern(pattern)).toThrow(UnsupportedPatternError);
    expect(() => compileEventPattern(pattern)).toThrow(/cannot tell whether EventBridge accepts wildcard patterns of complexity 9/);
  });
});
