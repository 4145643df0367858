export type ChipOption = { value: string; label: string; count?: number };

export type FilterChipsProps = {
  label: string;
  options: ChipOption[];
  value: string;
  onChange: (value: string) => void;
};

/** A single-choice row of chips (pressed buttons), for ranges and project filters. */
export function FilterChips({ label, options, value, onChange }: FilterChipsProps) {
  return (
    <div className="chips" role="group" aria-label={label}>
      <span className="chips-label" aria-hidden="true">
        {label}
      </span>
      {options.map((option) => (
        <button
          key={option.value}
          type="button"
          className="chip"
          aria-pressed={option.value === value}
          onClick={() => onChange(option.value)}
        >
          {option.label}
          {option.count !== undefined && <span className="chip-count">{option.count}</span>}
        </button>
      ))}
    </div>
  );
}
