/** Common English words that carry no topic: left out of keywords, hashtags and FAQ matching. */
export const STOP_WORDS = new Set(
  'about above after again against because been before being below between both cannot could does doing during each every from further have having here more most other over same should some such than that their them then there these they this those through under until very were what when where which while will with would your yours into only also just like more less much many need make made used using use our ours you we the and for are but not all any can her his its was one two three out who how why may might must shall get got new'.split(
    ' ',
  ),
);
