package linhtml

// CharW is the width the layout assumes for a character of a label.
const CharW = charW

// FitWidth is the width a timeline is fitted to before it scrolls.
const FitWidth = fitWidth
