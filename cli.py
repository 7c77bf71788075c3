"""podplan command line (placeholder until the CLI lands)."""
import click


@click.group()
def main() -> None:
    """podplan: batch placement optimizer for Kubernetes."""
