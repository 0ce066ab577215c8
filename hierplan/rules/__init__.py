"""The agent's rules: pure functions over words, numbers and dicts, with no LangChain or LangGraph import.

Nodes (hierplan.nodes) call them; each has its own tests. Their constants live in hierplan.config.

- kind: is a task numeric (asks for a quantity) or writing;
- tools: which tool a planned step uses;
- plan: how many steps a task may have (a question, or a reply that is one piece of writing, is one step);
- instructions: the checkable instructions a task states, and what an answer breaks;
- vote: the number most programs agree on;
- numbers: reading and comparing written numbers;
- answer: does a final answer agree with what the plan computed;
- text: code fences and words, which the evaluation imports too, so a count means the same thing in both.
"""
