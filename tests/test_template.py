"""A program's printed answer put into the template the task spells (hierplan.rules.template), with sentences of
our own."""

from __future__ import annotations

from hierplan.rules.template import fit_template, templates

TASK = ("How tall are the trees on average, and which plots have none? Give @avg_height[metres] rounded to one "
        "decimal and @empty_plots[plot ids], like #count_rows[n] for the rows read.")


def test_the_labels_before_a_placeholder_in_brackets_are_the_tasks_templates():
    assert templates(TASK) == ["@avg_height", "@empty_plots", "#count_rows"]
    assert templates("Use df['height'] and row[0], then print total_cost[value].") == ["total_cost"]
    assert templates("Print the mean height.") == []
    assert templates("Put the answer in box[answer].") == []  # a plain word before brackets is no label


def test_an_answer_already_in_the_form_is_left_as_it_is():
    out = "@avg_height[12.5]\n@empty_plots[3, 9]\n"
    assert fit_template(TASK, out) == out


def test_a_value_printed_beside_its_label_goes_between_the_brackets():
    assert fit_template(TASK, "@avg_height 12.5\n@empty_plots: 3, 9") == "@avg_height[12.5]\n@empty_plots[3, 9]"
    assert fit_template(TASK, "@avg_height = 12.5, @empty_plots 3") == "@avg_height[12.5], @empty_plots[3]"
    assert fit_template(TASK, "avg_height: 12.5") == "@avg_height[12.5]"  # the label without its sigil


def test_a_list_printed_inside_the_brackets_loses_its_own():
    assert fit_template(TASK, "@empty_plots[[3, 9]]") == "@empty_plots[3, 9]"
    assert fit_template(TASK, "@empty_plots[[]]") == "@empty_plots[]"
    assert fit_template(TASK, "@empty_plots []") == "@empty_plots[]"
    assert fit_template(TASK, "@empty_plots [3, 9]") == "@empty_plots[3, 9]"


def test_an_output_without_the_tasks_labels_or_a_task_without_templates_is_unchanged():
    assert fit_template(TASK, "The average height is 12.5 m.") == "The average height is 12.5 m."
    assert fit_template("What is the mean height?", "@avg_height 12.5") == "@avg_height 12.5"
    # prose that merely names the label, with no value after a separator, is not rewritten
    assert fit_template(TASK, "avg_height is the mean") == "avg_height is the mean"
    assert fit_template(TASK, "@avg_height is 12.5 m") == "@avg_height is 12.5 m"
